"""examples/ci: both pipelines parse, every supportgate command in them is a real command line,
and their `check` step, run as written by bash against a real `supportgate serve`, writes the
report the CI system uploads and fails the build exactly when a manifest is rejected."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from supportgate.cli import _parser

from ..server import Served, clean_env, make_keys, serving, supportgate_command

ROOT = Path(__file__).resolve().parents[2]
GITHUB = ROOT / "examples" / "ci" / "github-actions.yml"
GITLAB = ROOT / "examples" / "ci" / "gitlab-ci.yml"
SUPPORTGATE = ".supportgate-venv/bin/supportgate"
SARIF_UPLOAD = "github/codeql-action/upload-sarif@"
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text())
    assert isinstance(document, dict)
    return document


def github_steps() -> list[dict[str, Any]]:
    steps = load(GITHUB)["jobs"]["gate"]["steps"]
    assert isinstance(steps, list)
    return steps


def github_lines() -> list[str]:
    return [
        line for step in github_steps() for line in str(step.get("run", "")).splitlines() if line
    ]


def gitlab_job() -> dict[str, Any]:
    job = load(GITLAB)["supportgate"]
    assert isinstance(job, dict)
    return job


def gitlab_lines() -> list[str]:
    job = gitlab_job()
    return [str(line) for line in [*job["before_script"], *job["script"]]]


def supportgate_args(line: str) -> list[str] | None:
    """The arguments of the supportgate command a shell line runs (up to a redirection)."""
    words = shlex.split(line)
    if not words or words[0] != SUPPORTGATE:
        return None
    args = words[1:]
    return args[: args.index(">")] if ">" in args else args


def check_line(lines: list[str]) -> str:
    (line,) = [line for line in lines if (supportgate_args(line) or [""])[0] == "check"]
    return line


@pytest.mark.parametrize("lines", [github_lines, gitlab_lines], ids=["github", "gitlab"])
def test_every_supportgate_command_is_a_real_command_line(lines: Any) -> None:
    commands = [args for line in lines() if (args := supportgate_args(line)) is not None]
    assert [args[0] for args in commands] == ["collect", "check"]
    for args in commands:
        parsed = _parser().parse_args(args)  # exits 2 on an unknown command or flag
        assert callable(parsed.run)
    check = _parser().parse_args(commands[1])
    assert check.fail_on == "rejected"
    assert check.server == "$SUPPORTGATE_URL"
    assert check.token == "$SUPPORTGATE_TOKEN"  # noqa: S105 - the variable's name, from a secret


def test_github_pins_its_actions_and_uploads_sarif_even_when_the_gate_fails() -> None:
    steps = github_steps()
    uses = [str(step["uses"]).split(" #")[0] for step in steps if "uses" in step]
    assert uses
    assert all(PINNED.match(action) for action in uses), uses
    (upload,) = [step for step in steps if str(step.get("uses", "")).startswith(SARIF_UPLOAD)]
    assert upload["if"] == "always()"
    assert upload["with"]["sarif_file"] == "supportgate.sarif"
    assert "> supportgate.sarif" in check_line(github_lines())
    assert _parser().parse_args(supportgate_args(check_line(github_lines()))).format == "sarif"
    assert load(GITHUB)["permissions"]["security-events"] == "write"


def test_gitlab_reports_junit_even_when_the_gate_fails() -> None:
    job = gitlab_job()
    assert job["artifacts"]["when"] == "always"
    assert job["artifacts"]["reports"]["junit"] == "supportgate-junit.xml"
    assert "> supportgate-junit.xml" in check_line(gitlab_lines())
    assert _parser().parse_args(supportgate_args(check_line(gitlab_lines()))).format == "junit"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str]]:
    workdir = tmp_path_factory.mktemp("ci-kit-server")
    database = f"sqlite:///{workdir / 'supportgate.db'}"
    keys = make_keys(database)
    with serving(workdir, env=clean_env(SUPPORTGATE_DATABASE_URL=database)) as served:
        yield served, keys["ci"]


def run_as_ci(line: str, workspace: Path, served: Served, token: str) -> int:
    """The pipeline's line, run by bash in a workspace laid out as the pipeline expects."""
    venv_bin = workspace / ".supportgate-venv" / "bin"
    venv_bin.mkdir(parents=True)
    launcher = venv_bin / "supportgate"
    launcher.write_text("#!/bin/sh\nexec " + shlex.join(supportgate_command()) + ' "$@"\n')
    launcher.chmod(0o755)
    env = clean_env(
        SUPPORTGATE_URL=served.url,
        SUPPORTGATE_TOKEN=token,
        SUPPORTGATE_IDEMPOTENCY_SCOPE=f"ci-kit-{workspace.name}",
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    )
    bash = shutil.which("bash")
    assert bash is not None
    done = subprocess.run(
        [bash, "-eo", "pipefail", "-c", line],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "supportgate: error" not in done.stderr, done.stderr
    return done.returncode


def workspace(tmp_path: Path, examples: Path, hardware: str, *deployments: str) -> Path:
    root = tmp_path / "workspace"
    (root / "deploy").mkdir(parents=True)
    shutil.copy(examples / hardware, root / "hardware.yaml")
    for name in deployments:
        shutil.copy(examples / name, root / "deploy" / name)
    return root


CASES = [
    pytest.param(("hw-b200-pool.yaml", "dep-b200-offline.yaml"), 0, id="supported-passes"),
    pytest.param(
        ("hw-h100-pool-a.yaml", "dep-h100-port-trial.yaml", "dep-h100-production.yaml"),
        1,
        id="rejected-fails",
    ),
]


def sarif_fails(root: Path, files: tuple[str, ...]) -> bool:
    """Whether the SARIF report (version 2.1.0) holds an error."""
    del files  # SARIF lists results, not the manifests checked
    sarif = json.loads((root / "supportgate.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    return "error" in [result["level"] for run in sarif["runs"] for result in run["results"]]


def junit_fails(root: Path, files: tuple[str, ...]) -> bool:
    """Whether the JUnit report (a test case per manifest) holds a failure."""
    tree = ET.parse(root / "supportgate-junit.xml")  # noqa: S314 - our own output
    cases = list(tree.getroot().iter("testcase"))
    assert len(cases) == len(files)
    return any(case.find("failure") is not None for case in cases)


REPORTS = [  # a pipeline's lines, and whether the report its check step wrote shows a failure
    pytest.param(github_lines, sarif_fails, id="github-sarif"),
    pytest.param(gitlab_lines, junit_fails, id="gitlab-junit"),
]


@pytest.mark.parametrize(("files", "exit_code"), CASES)
@pytest.mark.parametrize(("lines", "report_fails"), REPORTS)
def test_the_check_step_writes_its_report_and_gates(  # noqa: PLR0917 - pytest passes by name
    server: tuple[Served, str],
    examples_dir: Path,
    tmp_path: Path,
    lines: Callable[[], list[str]],
    report_fails: Callable[[Path, tuple[str, ...]], bool],
    files: tuple[str, ...],
    exit_code: int,
) -> None:
    served, token = server
    root = workspace(tmp_path, examples_dir, *files)
    assert run_as_ci(check_line(lines()), root, served, token) == exit_code
    assert report_fails(root, files) == (exit_code == 1)
