"""examples/ci, examples/collect and action.yml: every pipeline and the action are valid
against the JSON schemas their CI systems publish (vendored in check-jsonschema), pin what they
use, and keep their report even when the gate fails; no CI example describes its runner as a
pool, and the collector examples describe the pool on its own machines and record it. Every
supportgate command in them is a real command line, and the GitLab `check` step, run as
written by bash against a real `supportgate serve` tracking the pool, writes the report
GitLab reads, fails the build exactly when a manifest is rejected, and records nothing. The
action's steps run for real under act in test_ci_kit_action.py."""

from __future__ import annotations

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

import httpx
import pytest
import yaml

from supportgate.cli import _parser

from ..server import Served, clean_env, make_keys, run_cli, serving, supportgate_command
from .ci_kit import ROOT

GITHUB = ROOT / "examples" / "ci" / "github-actions.yml"
GITLAB = ROOT / "examples" / "ci" / "gitlab-ci.yml"
COLLECT = ROOT / "examples" / "collect"
ACTION = ROOT / "action.yml"
SUPPORTGATE = ".supportgate-venv/bin/supportgate"
SARIF_UPLOAD = "github/codeql-action/upload-sarif@"
ARTIFACT = "actions/upload-artifact@"
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
LOCAL_ACTION = "./.supportgate"  # the example's checkout of supportgate (action.yml at its root)
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"
SCHEMAS = [  # (file, check-jsonschema's vendored schema for it)
    pytest.param(GITHUB, "vendor.github-workflows", id="github-workflow"),
    pytest.param(ACTION, "vendor.github-actions", id="github-action"),
    pytest.param(GITLAB, "vendor.gitlab-ci", id="gitlab-ci"),
]


def load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text())
    assert isinstance(document, dict)
    return document


def github_steps() -> list[dict[str, Any]]:
    steps = load(GITHUB)["jobs"]["gate"]["steps"]
    assert isinstance(steps, list)
    return steps


def action_steps() -> list[dict[str, Any]]:
    steps = load(ACTION)["runs"]["steps"]
    assert isinstance(steps, list)
    return steps


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


@pytest.mark.parametrize(("path", "schema"), SCHEMAS)
def test_valid_against_the_ci_systems_schema(path: Path, schema: str) -> None:
    assert validate(path, schema).returncode == 0


BROKEN = [  # a copy with one mistake each schema catches
    pytest.param(GITHUB, "vendor.github-workflows", ("runs-on:", "runs_on:"), id="github-workflow"),
    pytest.param(ACTION, "vendor.github-actions", ("shell: bash", "shell: []"), id="github-action"),
    pytest.param(GITLAB, "vendor.gitlab-ci", ("when: always", "when: sometimes"), id="gitlab-ci"),
]


@pytest.mark.parametrize(("path", "schema", "mistake"), BROKEN)
def test_the_schema_check_catches_a_mistake(
    tmp_path: Path, path: Path, schema: str, mistake: tuple[str, str]
) -> None:
    text = path.read_text()
    assert mistake[0] in text
    broken = tmp_path / path.name
    broken.write_text(text.replace(mistake[0], mistake[1], 1))
    done = validate(broken, schema)
    assert done.returncode == 1, done.stdout
    assert "Schema validation errors" in done.stdout


def validate(path: Path, schema: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHECK_JSONSCHEMA), "--builtin-schema", schema, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_every_supportgate_command_is_a_real_command_line() -> None:
    commands = [args for line in gitlab_lines() if (args := supportgate_args(line)) is not None]
    assert [args[0] for args in commands] == ["check"]
    check = _parser().parse_args(commands[0])  # exits 2 on an unknown command or flag
    assert check.fail_on == "rejected"
    assert check.server == "$SUPPORTGATE_URL"
    assert check.supportgate_only
    assert not check.record  # --record comes from SUPPORTGATE_RECORD, on the default branch only
    (record_rule,) = [rule for rule in gitlab_job()["rules"] if "variables" in rule]
    assert record_rule["if"] == "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH"
    assert record_rule["variables"] == {"SUPPORTGATE_RECORD": "--record"}
    # No --token: `check` reads SUPPORTGATE_TOKEN from the environment, where a key on the
    # command line would show in the process list and the job's trace.
    assert check.token is None
    assert "SUPPORTGATE_TOKEN" not in check_line(gitlab_lines())


def test_no_ci_example_describes_its_runner_as_a_pool() -> None:
    for path in (GITHUB, GITLAB, ACTION):
        assert "collect" not in yaml.safe_dump(load(path)), path
    assert "self-hosted" not in GITHUB.read_text()


def collector_commands(text: str, values: dict[str, str]) -> list[list[str]]:
    """The supportgate commands of a systemd unit's ExecStart lines or a crontab line, with
    the environment file's values put in."""
    for name, value in values.items():
        text = text.replace(f"${{{name}}}", value).replace(f'"${name}"', value)
    commands = []
    for line in text.splitlines():
        words = shlex.split(line.removeprefix("ExecStart="), comments=True)
        while "/opt/supportgate/bin/supportgate" in words:
            words = words[words.index("/opt/supportgate/bin/supportgate") + 1 :]
            end = next((i for i, word in enumerate(words) if word in {"&&", ">/dev/null"}), None)
            commands.append(words[:end])
    return commands


@pytest.mark.parametrize("name", ["supportgate-collect.service", "crontab"])
def test_the_collector_describes_the_whole_pool_on_its_machines_and_records_it(name: str) -> None:
    values = dict(
        line.split("=", 1)
        for line in (COLLECT / "collect.env").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert int(values["SUPPORTGATE_NODES"]) > 1  # the pool's node count, not this machine
    collect, check = collector_commands((COLLECT / name).read_text(), values)
    parsed = _parser().parse_args(collect)
    assert (parsed.name, parsed.nodes) == (
        values["SUPPORTGATE_POOL"],
        int(values["SUPPORTGATE_NODES"]),
    )
    gate = _parser().parse_args(check)
    assert gate.record
    assert gate.server == values["SUPPORTGATE_URL"]
    assert gate.files == [str(parsed.output)]
    assert gate.token is None  # from SUPPORTGATE_TOKEN in the environment file


def test_the_collector_runs_on_a_schedule() -> None:
    timer = (COLLECT / "supportgate-collect.timer").read_text()
    assert "OnCalendar=hourly" in timer
    assert "WantedBy=timers.target" in timer
    crontab = (COLLECT / "crontab").read_text()
    assert any(line.startswith("17 * * * * root ") for line in crontab.splitlines())


def test_github_pins_what_it_uses_and_runs_the_action_from_supportgates_checkout() -> None:
    steps = github_steps()
    remote = [str(step["uses"]) for step in [*steps, *action_steps()] if "uses" in step]
    remote.remove(LOCAL_ACTION)
    assert all(PINNED.match(action) for action in remote), remote
    (checkout,) = [step for step in steps if step.get("with", {}).get("path") == ".supportgate"]
    assert checkout["with"]["repository"] == "${{ vars.SUPPORTGATE_REPOSITORY }}"
    (gate,) = [step for step in steps if step.get("uses") == LOCAL_ACTION]
    assert gate["with"]["server"] == "${{ vars.SUPPORTGATE_URL }}"
    assert gate["with"]["token"] == "${{ secrets.SUPPORTGATE_TOKEN }}"  # noqa: S105 - a reference
    assert load(GITHUB)["permissions"]["security-events"] == "write"  # upload-sarif


def test_the_action_keeps_and_uploads_sarif_even_when_the_gate_fails_then_fails_on_it() -> None:
    steps = action_steps()
    (upload,) = [step for step in steps if str(step.get("uses", "")).startswith(SARIF_UPLOAD)]
    assert upload["if"].startswith("always() && ")
    assert "github.event.repository.private == false" in upload["if"]  # where it has code scanning
    assert upload["with"]["sarif_file"] == "${{ steps.check.outputs.sarif-file }}"
    (artifact,) = [step for step in steps if str(step.get("uses", "")).startswith(ARTIFACT)]
    assert artifact["if"].startswith("always() && ")
    assert "${{ steps.check.outputs.sarif-file }}" in artifact["with"]["path"]
    assert steps[-1]["if"].startswith("always() && ")
    assert 'exit "$CODE"' in steps[-1]["run"]


def test_gitlab_reports_junit_even_when_the_gate_fails() -> None:
    job = gitlab_job()
    assert job["artifacts"]["when"] == "always"
    assert job["artifacts"]["reports"]["junit"] == "supportgate-junit.xml"
    assert "> supportgate-junit.xml" in check_line(gitlab_lines())
    assert _parser().parse_args(supportgate_args(check_line(gitlab_lines()))).fmt == "junit"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, dict[str, str]]]:
    workdir = tmp_path_factory.mktemp("ci-kit-server")
    database = f"sqlite:///{workdir / 'supportgate.db'}"
    keys = make_keys(database)
    with serving(workdir, env=clean_env(SUPPORTGATE_DATABASE_URL=database)) as served:
        yield served, keys


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


def workspace(
    tmp_path: Path, examples: Path, served: Served, token: str, hardware: str, *deployments: str
) -> Path:
    """The repository's deployments under deploy/; their pool recorded on the server by its
    own machines (as examples/collect/ does), so CI finds it tracked."""
    pool = run_cli(
        ["check", str(examples / hardware), "--server", served.url, "--record"],
        env=clean_env(SUPPORTGATE_TOKEN=token),
        cwd=tmp_path,
    )
    assert pool.returncode in (0, 1), pool.stderr
    root = tmp_path / "workspace"
    (root / "deploy").mkdir(parents=True)
    for name in deployments:
        shutil.copy(examples / name, root / "deploy" / name)
    (root / "deploy" / "service.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n"  # Kubernetes: passed over
    )
    return root


def tracked(served: Served, token: str) -> list[dict[str, Any]]:
    listed = httpx.get(f"{served.url}/v1/manifests", headers={"Authorization": f"Bearer {token}"})
    assert listed.status_code == 200, listed.text
    items: list[dict[str, Any]] = listed.json()["items"]
    return items


CASES = [
    pytest.param(("hw-b200-pool.yaml", "dep-b200-offline.yaml"), 0, id="supported-passes"),
    pytest.param(
        ("hw-h100-pool-a.yaml", "dep-h100-port-trial.yaml", "dep-h100-production.yaml"),
        1,
        id="rejected-fails",
    ),
]


def junit_fails(root: Path, files: tuple[str, ...]) -> bool:
    """Whether the JUnit report (a test case per manifest) holds a failure."""
    tree = ET.parse(root / "supportgate-junit.xml")  # noqa: S314 - our own output
    cases = list(tree.getroot().iter("testcase"))
    assert len(cases) == len(files) - 1  # the deployments (the pool is tracked already)
    return any(case.find("failure") is not None for case in cases)


REPORTS = [  # a pipeline's lines, and whether the report its check step wrote shows a failure
    pytest.param(gitlab_lines, junit_fails, id="gitlab-junit"),
]


@pytest.mark.parametrize(("files", "exit_code"), CASES)
@pytest.mark.parametrize(("lines", "report_fails"), REPORTS)
def test_the_check_step_writes_its_report_and_gates(  # noqa: PLR0917 - pytest passes by name
    server: tuple[Served, dict[str, str]],
    examples_dir: Path,
    tmp_path: Path,
    lines: Callable[[], list[str]],
    report_fails: Callable[[Path, tuple[str, ...]], bool],
    files: tuple[str, ...],
    exit_code: int,
) -> None:
    served, keys = server
    root = workspace(tmp_path, examples_dir, served, keys["ci"], *files)
    before = tracked(served, keys["procurement"])
    assert run_as_ci(check_line(lines()), root, served, keys["ci"]) == exit_code
    assert report_fails(root, files) == (exit_code == 1)
    assert tracked(served, keys["procurement"]) == before  # a dry run: nothing recorded
