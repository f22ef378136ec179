"""The policy files as one unit: their text, their revision digest and the default matrix."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from supportgate.errors import UsageError

DEFAULT_MATRIX_FILE = Path("matrix") / "data.yaml"


@dataclass(frozen=True, slots=True)
class PolicyBundle:
    """Every non-test `.rego` module under a policy directory, keyed by its relative path."""

    directory: Path
    modules: tuple[tuple[str, str], ...]
    revision: str

    @classmethod
    def load(cls, directory: Path) -> PolicyBundle:
        if not directory.is_dir():
            raise UsageError(f"{directory} does not exist", field="SUPPORTGATE_POLICY_DIR")
        files = sorted(
            path for path in directory.rglob("*.rego") if not path.name.endswith("_test.rego")
        )
        if not files:
            raise UsageError(f"{directory} holds no .rego files", field="SUPPORTGATE_POLICY_DIR")
        modules = tuple(
            (path.relative_to(directory).as_posix(), path.read_text(encoding="utf-8"))
            for path in files
        )
        return cls(directory=directory, modules=modules, revision=_revision(modules))

    @property
    def default_matrix_path(self) -> Path:
        return self.directory / DEFAULT_MATRIX_FILE


def _revision(modules: tuple[tuple[str, str], ...]) -> str:
    """sha256 over the modules' paths and texts, in path order: any edit is a new revision."""
    digest = hashlib.sha256()
    for name, text in modules:
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update(text.encode())
        digest.update(b"\0")
    return f"sha256:{digest.hexdigest()}"
