"""supportgate as a stranger gets it: the wheel `python -m build` makes, installed with plain pip
into a fresh virtualenv, run in a directory that holds only copies of the example manifests.

The wheel is built from exactly the files the Dockerfile's build stage copies
(tests/docker_context.py), so this is also the wheel the image installs. Slow (a build and a
pip install of every dependency, from the pip cache): marked `slow`, run by ./scripts/test and CI.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

import supportgate
from supportgate.policy.inputs import format_time

from ..docker_context import REPO, copy_build_context, is_copied
from ..examples import expected, report_problems
from ..server import clean_env, run_cli, serving

pytestmark = pytest.mark.slow

BUILD_TIMEOUT_S = 600.0


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        argv, capture_output=True, text=True, check=False, timeout=BUILD_TIMEOUT_S, **kwargs
    )
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build` (an sdist, then the wheel from it) on the Dockerfile's build context."""
    context = tmp_path_factory.mktemp("context")
    copy_build_context(context)
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(dist), str(context)])
    wheels = sorted(dist.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel installed; its bin directory."""
    environment = tmp_path_factory.mktemp("venv")
    venv.create(environment, with_pip=True)
    bin_dir = environment / "bin"
    _run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", str(wheel)])
    return bin_dir


def _files_under(directory: Path) -> set[str]:
    return {
        path.relative_to(directory).as_posix()
        for path in directory.rglob("*")
        if path.is_file() and is_copied(path)
    }


def _expected_in_wheel() -> set[str]:
    """Every file of the package and of the directories pyproject.toml maps into it."""
    mapped = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    expected = {f"supportgate/{name}" for name in _files_under(REPO / "supportgate")}
    for package, directory in mapped["package-dir"].items():
        prefix = package.replace(".", "/")
        expected |= {f"{prefix}/{name}" for name in _files_under(REPO / directory)}
    return expected


def test_the_wheel_holds_every_module_policy_migration_and_console_file(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    expected = _expected_in_wheel()
    for needed in (
        "supportgate/policies/matrix/data.yaml",
        "supportgate/policies/supportgate/decision/decision.rego",
        "supportgate/migrations/env.py",
        "supportgate/migrations/versions/0001_initial_schema.py",
        "supportgate/console/templates/base.html.j2",
        "supportgate/console/static/console.css",
    ):
        assert needed in expected  # the expectation itself covers the package data
    assert not expected - names, f"missing from the wheel: {sorted(expected - names)}"


def _without_ids(value: Any) -> Any:
    """A decision's random id aside, the installed and the checkout's `check` agree."""
    if isinstance(value, dict):
        return {key: _without_ids(item) for key, item in value.items() if key != "id"}
    if isinstance(value, list):
        return [_without_ids(item) for item in value]
    return value


def test_the_installed_wheel_checks_migrates_serves_and_verifies_outside_the_checkout(
    installed: Path, tmp_path: Path
) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = clean_env()
    for variable in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(variable, None)
    env["PATH"] = f"{installed}{os.pathsep}{env.get('PATH', '')}"
    installed_supportgate = [str(installed / "supportgate")]

    def supportgate_cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(args, env=env, cwd=workdir, command=installed_supportgate)

    where = _run(
        [str(installed / "python"), "-c", "import supportgate; print(supportgate.__file__)"],
        env=env,
        cwd=workdir,
    )
    assert Path(where.stdout.strip()).is_relative_to(installed.parent), where.stdout

    shown = supportgate_cli("--version")
    assert (shown.returncode, shown.stdout) == (0, f"supportgate {supportgate.__version__}\n")

    wanted = expected()  # examples/expected.yaml
    for example in wanted.files:
        shutil.copy2(example, workdir / example.name)
    at = format_time(wanted.evaluated_at)
    check_args = ("check", "--format", "json", "--at", at, *wanted.decisions)
    checked = supportgate_cli(*check_args)
    rejected = any(want.verdict == "rejected" for want in wanted.decisions.values())
    assert checked.returncode == (1 if rejected else 0), checked.stderr
    report = json.loads(checked.stdout)
    assert report_problems(report["results"], exact=True) == {}
    from_checkout = run_cli(check_args, env=clean_env(), cwd=workdir)
    assert from_checkout.returncode == checked.returncode, from_checkout.stderr
    assert _without_ids(report) == _without_ids(json.loads(from_checkout.stdout))

    upgraded = supportgate_cli("db", "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    assert (workdir / "supportgate.db").is_file()
    created = supportgate_cli("keys", "create", "--role", "ci", "--name", "x")
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip().splitlines()[-1]

    hardware = wanted.files[0]  # tracking order: hardware first
    checked_now = supportgate_cli("check", "--format", "json", hardware.name)  # as served: now
    (result,) = json.loads(checked_now.stdout)["results"]
    with serving(
        workdir, env=env, command=installed_supportgate, ready_path="/health/ready"
    ) as served:
        posted = httpx.post(
            f"{served.url}/v1/evaluations",
            content=hardware.read_bytes(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/yaml"},
            timeout=30,
        )
        assert posted.status_code == 201, posted.text
        assert posted.json()["verdict"] == result["decision"]["verdict"]
        login = httpx.get(f"{served.url}/ui/login", timeout=10)
        assert login.status_code == 200, login.text  # a template from the wheel
        stylesheet = httpx.get(f"{served.url}/ui/static/console.css", timeout=10)
        assert stylesheet.status_code == 200
        assert stylesheet.text == (REPO / "supportgate/console/static/console.css").read_text()
        assert served.stop() in {0, -signal.SIGTERM}, served.output()

    verified = supportgate_cli("audit", "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("audit log intact: 2 entries, root "), verified.stdout
