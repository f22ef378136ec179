"""action.yml run for real: examples/ci/github-actions.yml, exactly as written, executed by
act (nektos/act, a reimplementation of the GitHub Actions runner, pinned in scripts/lib.sh and
installed by scripts/check-ci-kit) on this machine (`-P ubuntu-24.04=-self-hosted`: no
containers), against a real `supportgate serve` that tracks the B200 pool (recorded by the
pool's own machines, as examples/collect/ does).

What act cannot fetch here is replaced by a local action of the same interface
(`--local-repository`): `actions/checkout` of supportgate copies this checkout (tracked and new
files, uncommitted edits included) to the `path:` the workflow names,
`github/codeql-action/upload-sarif` and `actions/upload-artifact` keep the files they are
given. act copies the user's repository itself for the first checkout. A pull request is a
dry run (nothing recorded); a push to the default branch records.

Each run installs supportgate into the action's virtualenv with pip (pip's cache warm): 35 s
to 45 s a run on the 2-core development machine when it is quiet, about twice that loaded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from ..server import Served, clean_env, make_keys, run_cli, serving
from .ci_kit import (
    B200_POOL,
    PASSING_DEPLOYMENT,
    POOL_NAME,
    REJECTED_DEPLOYMENT,
    REJECTED_RULE,
    ROOT,
    committed_repository,
    copy_of_this_checkout,
    git,
    write_files,
)

# pip installs supportgate into a fresh virtualenv, as in the wheel test
pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "ci" / "github-actions.yml"
ACT_TIMEOUT_S = 900
ACT_STUMBLE = "get a valid docker connection"
"""act, asked for no containers, once in about five full suites (2026-12-05) still looked for
Docker while ending a job, after every step the test reads had run: act's, not the kit's."""
USER_REPOSITORY = "https://github.com/acme/inference-fleet"  # gives github.repository_owner
SUPPORTGATE_REPOSITORY = "acme/supportgate"
SUPPORTGATE_REF = "v0.1.0"

FAKE_CHECKOUT = """\
name: checkout (test double)
description: copies the supportgate source the test prepared to the path asked for
inputs: {repository: {required: true}, ref: {required: true}, path: {required: true}}
runs:
  using: composite
  steps:
    - shell: bash
      env:
        REPOSITORY: ${{ inputs.repository }}
        REF: ${{ inputs.ref }}
        TARGET: ${{ inputs.path }}
      run: |
        echo "$REPOSITORY@$REF" >"$CI_KIT_RECORD/checked-out"
        mkdir -p "$TARGET" && cp -R "$CI_KIT_SUPPORTGATE_SOURCE/." "$TARGET"
"""
FAKE_UPLOAD_SARIF = """\
name: upload-sarif (test double)
description: keeps the SARIF file it would upload, and the category
inputs: {sarif_file: {required: true}, category: {required: false}}
runs:
  using: composite
  steps:
    - shell: bash
      env:
        SARIF_FILE: ${{ inputs.sarif_file }}
        CATEGORY: ${{ inputs.category }}
      run: |
        cp "$SARIF_FILE" "$CI_KIT_RECORD/uploaded.sarif"
        printf '%s' "$CATEGORY" >"$CI_KIT_RECORD/category"
"""


FAKE_UPLOAD_ARTIFACT = """\
name: upload-artifact (test double)
description: keeps the files it would upload, under the artifact's name
inputs: {name: {required: true}, path: {required: true}, if-no-files-found: {required: false}}
runs:
  using: composite
  steps:
    - shell: bash
      env:
        NAME: ${{ inputs.name }}
        FILES: ${{ inputs.path }}
      run: |
        mkdir -p "$CI_KIT_RECORD/artifact/$NAME"
        while read -r file; do
          if [ -n "$file" ]; then cp "$file" "$CI_KIT_RECORD/artifact/$NAME/"; fi
        done <<<"$FILES"
"""
EVENTS = {
    "pull_request": {
        "number": 7,
        "pull_request": {"number": 7, "head": {"ref": "feature"}, "base": {"ref": "main"}},
        "repository": {"default_branch": "main", "private": False},
    },
    "push": {"ref": "refs/heads/main", "repository": {"default_branch": "main", "private": False}},
}


def act_binary() -> str:
    go_bin = subprocess.run(
        ["go", "env", "GOPATH"],  # noqa: S607 - where scripts/check-ci-kit installs act
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    found = shutil.which("act") or shutil.which("act", path=str(Path(go_bin) / "bin"))
    if found is None:
        pytest.fail(
            "no `act` on PATH or in $(go env GOPATH)/bin: ./scripts/check-ci-kit installs it"
        )
    return found


def uses_of(workflow: dict[str, Any], prefix: str) -> str:
    """The one `uses:` of the example's steps and of action.yml's that starts with `prefix`."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    steps = [*workflow["jobs"]["gate"]["steps"], *action["runs"]["steps"]]
    found = {str(step["uses"]) for step in steps if str(step.get("uses", "")).startswith(prefix)}
    (uses,) = found
    return uses


@dataclass(frozen=True)
class Kit:
    served: Served
    keys: dict[str, str]
    supportgate_source: Path
    doubles: Path  # fake actions, by the repository each stands in for


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    workdir = tmp_path_factory.mktemp("ci-kit-action")
    database = f"sqlite:///{workdir / 'supportgate.db'}"
    keys = make_keys(database)
    source = copy_of_this_checkout(workdir / "supportgate-source")
    doubles = workdir / "doubles"
    write_files(
        doubles,
        {
            "checkout/action.yml": FAKE_CHECKOUT,
            "codeql-action/upload-sarif/action.yml": FAKE_UPLOAD_SARIF,
            "upload-artifact/action.yml": FAKE_UPLOAD_ARTIFACT,
        },
    )
    pool = workdir / "pool.yaml"
    pool.write_text(B200_POOL)
    with serving(workdir / "server", env=clean_env(SUPPORTGATE_DATABASE_URL=database)) as served:
        recorded = run_cli(
            ["check", str(pool), "--server", served.url, "--record"],
            env=clean_env(SUPPORTGATE_TOKEN=keys["ci"]),
            cwd=workdir,
        )
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        yield Kit(served=served, keys=keys, supportgate_source=source, doubles=doubles)


@dataclass(frozen=True)
class Run:
    returncode: int
    log: str
    record: Path  # what the test doubles kept


def run_example(
    kit: Kit, tmp_path: Path, deployments: dict[str, str], event: str = "pull_request"
) -> Run:
    """The example workflow, run by act on `event` in a user repository holding
    `deployments`."""
    text = EXAMPLE.read_text()
    workflow = yaml.safe_load(text)
    repo = tmp_path / "user-repository"
    write_files(
        repo,
        {
            ".github/workflows/supportgate.yml": text,
            **{f"deploy/{name}": text for name, text in deployments.items()},
        },
    )
    committed_repository(repo)
    git(repo, "remote", "add", "origin", USER_REPOSITORY)
    record = tmp_path / "record"
    record.mkdir()
    checkout = uses_of(workflow, "actions/checkout@")
    upload = uses_of(workflow, "github/codeql-action/upload-sarif@").replace("/upload-sarif", "")
    artifact = uses_of(workflow, "actions/upload-artifact@")
    payload = tmp_path / "event.json"
    payload.write_text(json.dumps(EVENTS[event]))
    env = clean_env(
        XDG_CACHE_HOME=str(tmp_path / "act-cache"),  # act's copies of the workspace
        PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
    )
    for _attempt in range(2):  # again only when act itself stumbled (ACT_STUMBLE)
        done = subprocess.run(
            [
                act_binary(),
                event,
                f"--eventpath={payload}",
                "--platform=ubuntu-24.04=-self-hosted",
                "--no-cache-server",
                f"--local-repository={checkout}={kit.doubles / 'checkout'}",
                f"--local-repository={upload}={kit.doubles / 'codeql-action'}",
                f"--local-repository={artifact}={kit.doubles / 'upload-artifact'}",
                f"--var=SUPPORTGATE_URL={kit.served.url}",
                f"--var=SUPPORTGATE_REPOSITORY={SUPPORTGATE_REPOSITORY}",
                f"--var=SUPPORTGATE_REF={SUPPORTGATE_REF}",
                f"--secret=SUPPORTGATE_TOKEN={kit.keys['ci']}",
                f"--env=CI_KIT_RECORD={record}",
                f"--env=CI_KIT_SUPPORTGATE_SOURCE={kit.supportgate_source}",
            ],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=ACT_TIMEOUT_S,
            check=False,
        )
        if ACT_STUMBLE not in done.stdout + done.stderr:
            break
    return Run(returncode=done.returncode, log=done.stdout + done.stderr, record=record)


def tracked(kit: Kit) -> dict[tuple[str, str], str]:
    """(kind, name) -> latest verdict of every manifest the server tracks."""
    response = httpx.get(
        f"{kit.served.url}/v1/manifests",
        headers={"Authorization": f"Bearer {kit.keys['procurement']}"},
        params={"limit": 100},
        timeout=30,
    )
    response.raise_for_status()
    return {
        (item["kind"], item["name"]): item["latest_decision"]["verdict"]
        for item in response.json()["items"]
    }


def uploaded_sarif(run: Run) -> dict[str, Any]:
    """The SARIF report the upload step was given (version 2.1.0)."""
    sarif = json.loads((run.record / "uploaded.sarif").read_text())
    assert isinstance(sarif, dict)
    assert sarif["version"] == "2.1.0"
    return sarif


def sarif_results(run: Run) -> list[dict[str, Any]]:
    return [result for each in uploaded_sarif(run)["runs"] for result in each["results"]]


def step_summary(run: Run) -> str:
    """The job summary, as the artifact keeps it."""
    return (run.record / "artifact" / "supportgate-report" / "supportgate-summary.md").read_text()


def test_a_pull_request_is_judged_against_the_tracked_pool_and_records_nothing(
    kit: Kit, tmp_path: Path
) -> None:
    before = tracked(kit)
    run = run_example(kit, tmp_path, {"batch.yaml": PASSING_DEPLOYMENT})
    assert run.returncode == 0, run.log
    assert (
        run.record / "checked-out"
    ).read_text().strip() == f"{SUPPORTGATE_REPOSITORY}@{SUPPORTGATE_REF}"
    assert "error" not in [result["level"] for result in sarif_results(run)]
    assert (run.record / "category").read_text() == "supportgate"
    assert "| PASS | supported | `DeploymentManifest/v41-flash-b200-batch` |" in step_summary(run)
    assert "A dry run: nothing was recorded." in step_summary(run)
    assert tracked(kit) == before
    assert "every manifest passes the gate (fail on rejected)" in run.log


def test_a_push_to_the_default_branch_records(kit: Kit, tmp_path: Path) -> None:
    run = run_example(kit, tmp_path, {"batch.yaml": PASSING_DEPLOYMENT}, event="push")
    assert run.returncode == 0, run.log
    verdicts = tracked(kit)
    assert verdicts[("HardwareManifest", POOL_NAME)] == "supported"  # as its machines said
    assert verdicts[("DeploymentManifest", "v41-flash-b200-batch")] == "supported"
    assert f"Recorded on {kit.served.url}" in step_summary(run)


def test_a_rejected_deployment_is_explained_in_the_job_then_fails(kit: Kit, tmp_path: Path) -> None:
    run = run_example(kit, tmp_path, {"oversized.yaml": REJECTED_DEPLOYMENT})
    assert run.returncode != 0, run.log
    errors = [result for result in sarif_results(run) if result["level"] == "error"]
    assert REJECTED_RULE in [result["ruleId"] for result in errors], errors
    summary = step_summary(run)
    assert "| FAIL | rejected | `DeploymentManifest/v41-flash-b200-oversized` |" in summary
    assert f"| deny | `{REJECTED_RULE}` |" in summary
    assert "::error file=deploy/oversized.yaml,line=" in run.log  # an annotation on the file
    assert ("DeploymentManifest", "v41-flash-b200-oversized") not in tracked(kit)
    assert "a manifest fails the gate (fail on rejected)" in run.log


def test_a_broken_file_is_reported_with_all_its_problems_then_fails(
    kit: Kit, tmp_path: Path
) -> None:
    broken = PASSING_DEPLOYMENT.replace("v41-flash-b200-batch", "Not_A_DNS_Label").replace(
        "stage: production", "stage: shipped"
    )
    run = run_example(kit, tmp_path, {"batch.yaml": PASSING_DEPLOYMENT, "broken.yaml": broken})
    assert run.returncode != 0, run.log
    (invocation,) = uploaded_sarif(run)["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    notes = [note["message"]["text"] for note in invocation["toolExecutionNotifications"]]
    for field in ("$.metadata.name", "$.spec.stage"):
        assert any(note.startswith("deploy/broken.yaml: ") and field in note for note in notes)
    assert "::error file=deploy/broken.yaml,line=3,col=" in run.log
    assert "supportgate check could not check (exit 2)" in run.log
