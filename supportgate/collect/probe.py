"""How `collect` looks at the machine; tests answer `Probe` with recorded tool outputs.
Commands run in the C locale, as the parsers read English output.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

TIMEOUT_S: Final = 30.0


@dataclass(frozen=True, slots=True)
class Output:
    returncode: int
    stdout: str
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def text(self) -> str:
        """stdout and stderr together (some tools print versions or errors on either)."""
        return f"{self.stdout}\n{self.stderr}".strip()


class Probe(Protocol):
    def run(self, argv: Sequence[str]) -> Output | None:
        """None when it is not installed (not on PATH, not executable)."""

    def read(self, path: str) -> str | None:
        """None when it does not exist or cannot be read."""

    def env(self, name: str) -> str | None:
        """None when unset or empty."""


class SystemProbe:
    def run(self, argv: Sequence[str]) -> Output | None:
        env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
        try:
            done = subprocess.run(
                list(argv),
                capture_output=True,
                text=True,
                errors="replace",
                timeout=TIMEOUT_S,
                check=False,
                env=env,
                stdin=subprocess.DEVNULL,
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError):
            return None
        except subprocess.TimeoutExpired:
            return Output(returncode=-1, stdout="", stderr=f"timed out after {TIMEOUT_S:.0f}s")
        return Output(done.returncode, done.stdout, done.stderr)

    def read(self, path: str) -> str | None:
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def env(self, name: str) -> str | None:
        return os.environ.get(name) or None
