"""The Dockerfile builds supportgate's wheel in one stage and installs only that wheel in the
image. There is no Docker engine here: the file is read with BuildKit's own parser
(tests/docker_context.py), test_wheel.py builds and runs the wheel from exactly the files the
build stage copies, and scripts/check-compose validates docker-compose.yml, which builds it."""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatch
from typing import Any

from ..docker_context import DOCKERIGNORE, REPO, build_stage, stages


def _dev_pin(name: str) -> str:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    dev: list[str] = project["optional-dependencies"]["dev"]
    pins = [pin for pin in dev if pin.startswith(f"{name}==")]
    assert len(pins) == 1, f"the dev extra pins {name} once (found {pins})"
    return pins[0]


def _runs(commands: list[Any]) -> str:
    return "\n".join(str(command.value[0]) for command in commands)


def test_a_build_stage_then_the_image_on_the_same_python() -> None:
    found = stages()
    assert [stage.name for stage in found] == ["build", None]
    assert found[0].base == found[1].base, "the wheel is built on the Python it runs on"


def test_every_file_the_build_stage_copies_exists_and_is_not_ignored() -> None:
    lines = (line.strip() for line in DOCKERIGNORE.read_text().splitlines())
    ignored = [line for line in lines if line and not line.startswith("#")]
    for sources, destination in build_stage().context_copies():
        for source in sources:
            assert (REPO / source).exists(), f"COPY {source}: not in the repository"
            excluded = [pattern for pattern in ignored if fnmatch(source, pattern)]
            assert not excluded, f"COPY {source}: .dockerignore leaves it out ({excluded})"
            # docker_context.copy_build_context lays the files out the same way
            assert destination in ("./", f"./{source}"), f"COPY {source} {destination}"


def test_the_build_stage_copies_everything_the_wheel_is_built_from() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    setuptools = pyproject["tool"]["setuptools"]
    mapped = setuptools["package-dir"]
    roots = {package.split(".")[0] for package in setuptools["packages"] if package not in mapped}
    needed = {"pyproject.toml", pyproject["project"]["readme"], *roots, *mapped.values()}
    copied = {source for sources, _ in build_stage().context_copies() for source in sources}
    assert needed <= copied, f"the build stage does not copy {sorted(needed - copied)}"


def test_the_build_stage_builds_a_wheel_with_the_pinned_build() -> None:
    runs = _runs(build_stage().all("RUN"))
    assert f"pip install {_dev_pin('build')}" in runs
    assert re.search(r"python -m build --wheel --outdir (\S+) \.", runs), runs


def test_the_image_installs_the_built_wheel_and_no_checkout() -> None:
    image = stages()[-1]
    assert image.context_copies() == [], "the image copies nothing from the checkout"
    copies = image.all("COPY")
    assert [command.flags for command in copies] == [("--from=build",)]
    wheel_dir = copies[0].value[-1]
    runs = _runs(image.all("RUN"))
    assert f"pip install {wheel_dir}*.whl" in runs
    assert not re.search(r"(--editable|\s-e)\b", runs), "an editable install needs the checkout"
