"""The Dockerfile as BuildKit reads it (the `dockerfile` package wraps BuildKit's own parser):
its stages, and the files its build stage copies from the build context.

tests/packaging/test_dockerfile.py checks that those files exist and suffice for the wheel;
tests/packaging/test_wheel.py builds the wheel from exactly those files and runs it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dockerfile

REPO = Path(__file__).resolve().parents[1]
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"


@dataclass(frozen=True)
class Stage:
    name: str | None  # `FROM image AS name`
    base: str
    commands: tuple[Any, ...]  # dockerfile.Command: cmd (upper case), flags, value

    def all(self, instruction: str) -> list[Any]:
        return [command for command in self.commands if command.cmd.upper() == instruction]

    def context_copies(self) -> list[tuple[list[str], str]]:
        """(sources, destination) of each COPY/ADD from the build context (no --from)."""
        return [
            (list(command.value[:-1]), command.value[-1])
            for command in self.all("COPY") + self.all("ADD")
            if not any(flag.startswith("--from") for flag in command.flags)
        ]


def stages(path: Path = DOCKERFILE) -> list[Stage]:
    found: list[tuple[str | None, str, list[Any]]] = []
    for command in dockerfile.parse_file(str(path)):
        if command.cmd.upper() == "FROM":
            value = command.value
            name = value[2] if len(value) == 3 and value[1].upper() == "AS" else None
            found.append((name, value[0], []))
        else:
            found[-1][2].append(command)
    return [Stage(name, base, tuple(commands)) for name, base, commands in found]


def build_stage() -> Stage:
    return next(stage for stage in stages() if stage.name == "build")


def is_copied(path: Path) -> bool:
    """Whether a file under a copied directory reaches the build (.dockerignore's caches not)."""
    return "__pycache__" not in path.parts and path.suffix != ".pyc"


def _not_copied(directory: str, names: list[str]) -> list[str]:
    return [name for name in names if not is_copied(Path(directory) / name)]


def copy_build_context(destination: Path) -> None:
    """Lay out in `destination` what the build stage copies, as it lays it out in its WORKDIR."""
    for sources, _ in build_stage().context_copies():
        for source in sources:
            path = REPO / source
            if path.is_dir():
                shutil.copytree(path, destination / source, ignore=_not_copied)
            else:
                shutil.copy2(path, destination / source)
