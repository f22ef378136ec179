"""action.yml's `check` script, run by bash as GitHub runs a `shell: bash`
step (`bash --noprofile --norc -eo pipefail`), with the environment the step declares and a
stand-in `supportgate` that records its arguments: the command lines they build are real
`supportgate` command lines (parsed by the CLI's own parser), from the inputs as documented.
The whole action runs under act in test_ci_kit_action.py; these cases are the inputs' edges."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from supportgate.cli import _parser

from .ci_kit import ROOT, write_files

RECORDER = """\
#!/bin/sh
# Records its arguments, one per line, and the docs URL it was given; writes each --report
# FORMAT=FILE as `FORMAT report`; exits with $EXIT_CODE.
for arg in "$@"; do printf '%s\\n' "$arg"; done >"$RECORDED_ARGS"
for arg in "$@"; do
  case "$arg" in sarif=* | markdown=*) printf '%s report\\n' "${arg%%=*}" >"${arg#*=}" ;; esac
done
printf '%s' "${SUPPORTGATE_DOCS_URL-}" >"$RECORDED_ARGS.docs-url"
echo '::error file=deploy/a.yaml,line=3::an annotation'
exit "${EXIT_CODE:-0}"
"""


def action_step(step_id: str) -> dict[str, Any]:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    (step,) = [step for step in action["runs"]["steps"] if step.get("id") == step_id]
    assert isinstance(step, dict)
    assert step["shell"] == "bash"
    return step


@dataclass(frozen=True)
class StepRun:
    returncode: int
    stdout: str
    stderr: str
    args: list[str]  # what `supportgate` was called with ([] when it was not)
    docs_url: str  # the SUPPORTGATE_DOCS_URL it was given ("" when none or not called)
    outputs: dict[str, str]  # what the step wrote to $GITHUB_OUTPUT
    summary: str  # what it wrote to $GITHUB_STEP_SUMMARY


def run_step(
    step_id: str, workspace: Path, env: Mapping[str, str], *, exit_code: int = 0
) -> StepRun:
    step = action_step(step_id)
    assert set(env) <= set(step["env"]), "the test sets only what the step declares"
    script = workspace.parent / f"{step_id}.sh"
    script.write_text(step["run"])
    recorder = workspace.parent / "supportgate"
    recorder.write_text(RECORDER)
    recorder.chmod(0o755)
    recorded = workspace.parent / "args"
    outputs = workspace.parent / "github-output"
    summary = workspace.parent / "step-summary"
    bash = shutil.which("bash")
    assert bash is not None
    done = subprocess.run(
        [bash, "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=workspace,
        env={
            "PATH": "/usr/bin:/bin",
            "RUNNER_TEMP": str(workspace.parent),
            "GITHUB_OUTPUT": str(outputs),
            "GITHUB_STEP_SUMMARY": str(summary),
            "SUPPORTGATE": str(recorder),
            "RECORDED_ARGS": str(recorded),
            "EXIT_CODE": str(exit_code),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    lines = outputs.read_text().splitlines() if outputs.exists() else []
    return StepRun(
        returncode=done.returncode,
        stdout=done.stdout,
        stderr=done.stderr,
        args=recorded.read_text().splitlines() if recorded.exists() else [],
        docs_url=docs_url.read_text()
        if (docs_url := Path(f"{recorded}.docs-url")).exists()
        else "",
        outputs=dict(line.split("=", 1) for line in lines),
        summary=summary.read_text() if summary.exists() else "",
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    write_files(
        root,
        {
            "hardware.yaml": "",
            "deploy/a.yaml": "",
            "deploy/nested/b.yaml": "",
            "deploy/with space.yaml": "",
        },
    )
    return root


CHECK_ENV = {"SARIF_FILE": "supportgate.sarif", "FAIL_ON": "rejected", "RECORD": "auto"}
SERVER = "https://supportgate.example.com"


def test_check_expands_each_line_once_and_passes_on_a_line_matching_nothing(
    workspace: Path,
) -> None:
    files = "deploy/**/*.yaml\n\n  deploy/with space.yaml  \nmissing/*.yaml\nhardware.yaml\n"
    run = run_step("check", workspace, {**CHECK_ENV, "FILES": files, "SERVER": ""})
    assert run.returncode == 0, run.stderr
    parsed = _parser().parse_args(run.args)
    assert parsed.files == [
        "deploy/a.yaml",
        "deploy/nested/b.yaml",
        "deploy/with space.yaml",  # once, though two lines name it
        "missing/*.yaml",  # `check` names it in its report
        "hardware.yaml",
    ]
    assert (parsed.fmt, parsed.fail_on, parsed.server, parsed.token) == (
        "github",  # annotations on the files, from the step's log
        "rejected",
        None,
        None,
    )
    assert parsed.supportgate_only
    assert parsed.find_hardware  # no server: the repository's own pools
    summary = f"{workspace.parent}/supportgate-summary.md"
    assert parsed.reports == [("sarif", "supportgate.sarif"), ("markdown", summary)]
    assert "::error file=deploy/a.yaml,line=3::an annotation" in run.stdout
    assert (workspace / "supportgate.sarif").read_text() == "sarif report\n"
    assert run.summary == "markdown report\nA dry run: nothing was recorded.\n"
    assert run.outputs == {
        "exit-code": "0",
        "sarif-file": "supportgate.sarif",
        "summary-file": summary,
        "recorded": "false",
    }


@pytest.mark.parametrize("exit_code", [1, 2])
def test_check_records_a_failing_exit_code_and_leaves_failing_to_the_last_step(
    workspace: Path, exit_code: int
) -> None:
    run = run_step(
        "check",
        workspace,
        {
            **CHECK_ENV,
            "FILES": "deploy/a.yaml",
            "FAIL_ON": "experimental",
            "SERVER": SERVER,
            "SUPPORTGATE_TOKEN": "a-ci-key",  # a made-up key
        },
        exit_code=exit_code,
    )
    assert run.returncode == 0, run.stderr  # the upload steps still run
    assert run.outputs["exit-code"] == str(exit_code)
    parsed = _parser().parse_args(run.args)
    assert parsed.server == SERVER
    assert parsed.fail_on == "experimental"
    assert not parsed.find_hardware  # the server resolves refs among its tracked pools
    assert "a-ci-key" not in run.args  # check reads it from SUPPORTGATE_TOKEN


PUSH_TO_MAIN = {"EVENT_NAME": "push", "GIT_REF": "refs/heads/main", "DEFAULT_BRANCH": "main"}


@pytest.mark.parametrize(
    ("event", "record", "recorded"),
    [
        (PUSH_TO_MAIN, "auto", True),
        ({**PUSH_TO_MAIN, "GIT_REF": "refs/heads/feature"}, "auto", False),
        (
            {**PUSH_TO_MAIN, "EVENT_NAME": "pull_request", "GIT_REF": "refs/pull/7/merge"},
            "auto",
            False,
        ),
        ({**PUSH_TO_MAIN, "EVENT_NAME": "pull_request"}, "true", True),
        (PUSH_TO_MAIN, "false", False),
    ],
)
def test_record_defaults_from_the_event(
    workspace: Path, event: dict[str, str], record: str, recorded: bool
) -> None:
    env = {**CHECK_ENV, **event, "RECORD": record, "FILES": "deploy/a.yaml", "SERVER": SERVER}
    run = run_step("check", workspace, env)
    assert run.returncode == 0, run.stderr
    assert _parser().parse_args(run.args).record is recorded
    assert run.outputs["recorded"] == str(recorded).lower()
    said = f"Recorded on {SERVER}" if recorded else "A dry run: nothing was recorded."
    assert said in run.summary


def test_a_push_to_the_default_branch_without_a_server_records_nothing(workspace: Path) -> None:
    run = run_step(
        "check", workspace, {**CHECK_ENV, **PUSH_TO_MAIN, "FILES": "deploy/a.yaml", "SERVER": ""}
    )
    assert run.returncode == 0, run.stderr
    assert not _parser().parse_args(run.args).record


def test_a_bad_record_input_is_refused_naming_it(workspace: Path) -> None:
    run = run_step("check", workspace, {**CHECK_ENV, "RECORD": "yes", "FILES": "x", "SERVER": ""})
    assert run.returncode == 2
    assert (
        "::error title=supportgate::record: expected auto, true or false, got 'yes'" in run.stdout
    )
    assert run.args == []


CHECK_FILES = {**CHECK_ENV, "FILES": "deploy/a.yaml", "SERVER": ""}


def test_check_links_the_docs_of_the_action_repository_at_its_ref(workspace: Path) -> None:
    env = {**CHECK_FILES, "ACTION_REPOSITORY": "acme/supportgate", "ACTION_REF": "v0.1.0"}
    run = run_step("check", workspace, env)
    assert run.returncode == 0, run.stderr
    assert run.docs_url == "https://github.com/acme/supportgate/blob/v0.1.0/docs/"


def test_check_as_a_local_action_links_the_docs_of_its_checkout(
    workspace: Path, tmp_path: Path
) -> None:
    checkout = tmp_path / "supportgate-checkout"
    checkout.mkdir()
    git = ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    origin = "https://github.com/acme/supportgate.git"
    subprocess.run([*git, "remote", "add", "origin", origin], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    env = {**CHECK_FILES, "ACTION_PATH": str(checkout), "ACTION_REPOSITORY": "", "ACTION_REF": ""}
    run = run_step("check", workspace, env)
    assert run.returncode == 0, run.stderr
    assert run.docs_url == f"https://github.com/acme/supportgate/blob/{head}/docs/"


def test_check_without_a_known_source_leaves_the_docs_url_to_supportgate(
    workspace: Path, tmp_path: Path
) -> None:
    env = {**CHECK_FILES, "ACTION_PATH": str(tmp_path), "ACTION_REPOSITORY": "", "ACTION_REF": ""}
    run = run_step("check", workspace, env)
    assert run.returncode == 0, run.stderr
    assert run.docs_url == ""
