"""`supportgate serve` in a subprocess on a loopback port, for what only a real server shows:
chunked uploads, the JSON log lines on stdout, many clients at once, refusals at startup.

The server gets a clean environment: no SUPPORTGATE_* variable of the caller's leaks in, so
what it runs on is what the test says (the database URL, the OPA URL, the working directory).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from supportgate.config import Settings
from supportgate.runtime import Runtime

from .services import free_port
from .signing import key_env

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
ROLES = ("ci", "procurement", "admin")


def supportgate_command() -> list[str]:
    """The installed `supportgate` script beside this Python, else `python -m supportgate.cli`."""
    script = shutil.which("supportgate", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "supportgate.cli"]


def clean_env(**variables: str) -> dict[str, str]:
    """The caller's environment without SUPPORTGATE_* variables, plus `variables`, and on a
    PostgreSQL SUPPORTGATE_DATABASE_URL the tests' checkpoint signing key (unless given)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("SUPPORTGATE_")}
    env.update(key_env(variables.get("SUPPORTGATE_DATABASE_URL", "")))
    env.update(variables)
    return env


def run_cli(
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float = 120.0,
    command: Sequence[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`command` (default: supportgate_command()) with `args`, its output captured."""
    return subprocess.run(
        [*(command or supportgate_command()), *args],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def make_keys(database_url: str, names: Mapping[str, str] | None = None) -> dict[str, str]:
    """Migrate the database and create one key per role (named after it); role -> secret."""
    settings = replace(Settings.from_env({}), database_url=database_url)
    runtime = Runtime.build(settings)
    try:
        runtime.prepare_database(upgrade_schema=True)
        return {
            role: runtime.keys.create(name=(names or {}).get(role, role), role=role).key
            for role in ROLES
        }
    finally:
        runtime.stop()


@dataclass
class Served:
    """A running `supportgate serve`; `stdout`/`stderr` are files the server writes to."""

    url: str
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path

    def output(self) -> str:
        return self.stdout.read_text(errors="replace") + self.stderr.read_text(errors="replace")

    def log_events(self) -> list[dict[str, Any]]:
        """Every stdout line, each parsed as JSON (the server logs JSON lines off a tty)."""
        lines = self.stdout.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def stop(self) -> int:
        """SIGTERM, wait for a graceful exit (SIGKILL after STOP_TIMEOUT_S); the exit code."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STOP_TIMEOUT_S)
        return int(self.process.returncode)


@contextmanager
def serving(
    workdir: Path,
    *,
    env: Mapping[str, str],
    args: Sequence[str] = (),
    ready_path: str = "/health/live",
    command: Sequence[str] | None = None,
    port: int | None = None,
) -> Iterator[Served]:
    """`supportgate serve` in `workdir` on `port` (default: a free one); yields once
    `ready_path` answers 200. `command` is the supportgate to run (default:
    supportgate_command())."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    listen = ("--host", "127.0.0.1", "--port", str(port))
    stdout = workdir / f"serve-{port}.stdout"
    stderr = workdir / f"serve-{port}.stderr"
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(
            [*(command or supportgate_command()), "serve", *listen, *args],
            env=dict(env),
            cwd=workdir,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
        )
    served = Served(f"http://127.0.0.1:{port}", process, stdout, stderr)
    try:
        _wait_until_serving(served, ready_path)
        yield served
    finally:
        served.stop()


def _wait_until_serving(served: Served, path: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if served.process.poll() is not None:
            raise RuntimeError(
                f"supportgate serve exited with {served.process.returncode}:\n{served.output()}"
            )
        try:
            if httpx.get(served.url + path, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"supportgate serve did not answer {path} in {START_TIMEOUT_S}s")
