""".pre-commit-hooks.yaml: the `supportgate-check` hook run by pre-commit itself in a test
repository, as a user's `.pre-commit-config.yaml` would use it: `repo:` is a commit of this
checkout (pre-commit clones the commit it is given, and installs the hook's Python environment
from it with pip), so what runs is this repository's hook definition and package.

The first run installs the environment (PyPI reachable, pip's cache warm: 26 s to 75 s on the
2-core development machine, depending on its load); every test of the module reuses it
(PRE_COMMIT_HOME in the module's temp directory)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..server import clean_env
from .ci_kit import (
    B200_POOL,
    PASSING_DEPLOYMENT,
    POOL_NAME,
    REJECTED_DEPLOYMENT,
    REJECTED_RULE,
    ROOT,
    committed_repository,
    copy_of_this_checkout,
    deployment,
    git,
    write_files,
)

# pip installs supportgate into a fresh virtualenv, as in the wheel test
pytestmark = pytest.mark.slow

HOOK_ID = "supportgate-check"
INSTALL_TIMEOUT_S = 900
POOL = "hardware/b200-pool.yaml"
BATCH = "deploy/batch.yaml"
OVERSIZED = "deploy/oversized.yaml"
NOT_A_MANIFEST = "config/settings.yaml"  # YAML, but no supportgate manifest
KUBERNETES = "k8s/web.yaml"
HELM_TEMPLATE = "chart/templates/deployment.yaml"  # not even YAML
LOST = "deploy/lost.yaml"  # names a pool the repository does not have


@dataclass(frozen=True)
class HookRepository:
    path: Path
    rev: str
    home: Path  # PRE_COMMIT_HOME, holding the installed hook environment


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory: pytest.TempPathFactory) -> HookRepository:
    path = copy_of_this_checkout(tmp_path_factory.mktemp("supportgate-repo"))
    return HookRepository(
        path=path,
        rev=committed_repository(path),
        home=tmp_path_factory.mktemp("pre-commit-home"),
    )


def project(tmp_path: Path, hooks: HookRepository, hook: dict[str, Any]) -> Path:
    """A user's repository holding the manifests and a config that uses our hook."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "--quiet")
    config = {"repos": [{"repo": str(hooks.path), "rev": hooks.rev, "hooks": [hook]}]}
    write_files(
        root,
        {
            ".pre-commit-config.yaml": yaml.safe_dump(config, sort_keys=False),
            POOL: B200_POOL,
            BATCH: PASSING_DEPLOYMENT,
            OVERSIZED: REJECTED_DEPLOYMENT,
            NOT_A_MANIFEST: "log_level: debug\n",
            KUBERNETES: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
            "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
            HELM_TEMPLATE: "replicas: {{ .Values.replicas }}\n",
            LOST: PASSING_DEPLOYMENT.replace(POOL_NAME, "nowhere-pool").replace(
                "v41-flash-b200-batch", "v41-flash-lost"
            ),
        },
    )
    git(root, "add", "--all")
    return root


def pre_commit(root: Path, hooks: HookRepository, *files: str) -> subprocess.CompletedProcess[str]:
    """`pre-commit run --files FILE...`, as `git commit` runs it on the staged files."""
    # pre-commit splits a hook's files across processes (more than 4 files, and more than one
    # CPU, or TRAVIS set: 2 processes) unless the hook has require_serial.
    env = clean_env(PRE_COMMIT_HOME=str(hooks.home), TRAVIS="true")
    env.pop("PRE_COMMIT_NO_CONCURRENCY", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--color", "never", "--files", *files],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )


def test_the_hook_definition() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == HOOK_ID
    assert hook["entry"] == "supportgate check --supportgate-only --find-hardware"
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is True
    # One `check` for all the files: a deployment's hardware.ref resolves among them.
    assert hook["require_serial"] is True


def test_the_hook_passes_manifests_that_pass_and_ignores_other_yaml(
    hook_repository: HookRepository, tmp_path: Path
) -> None:
    root = project(tmp_path, hook_repository, {"id": HOOK_ID})
    done = pre_commit(root, hook_repository, POOL, BATCH, NOT_A_MANIFEST, KUBERNETES, HELM_TEMPLATE)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "supportgate check" in done.stdout
    assert "Passed" in done.stdout


def test_kubernetes_and_helm_files_alone_pass(
    hook_repository: HookRepository, tmp_path: Path
) -> None:
    root = project(tmp_path, hook_repository, {"id": HOOK_ID, "verbose": True})
    done = pre_commit(root, hook_repository, KUBERNETES, HELM_TEMPLATE, NOT_A_MANIFEST)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SKIP  {KUBERNETES}: not a supportgate/v1 document" in done.stdout


def test_many_deployments_are_checked_with_their_pool_in_one_check(
    hook_repository: HookRepository, tmp_path: Path
) -> None:
    root = project(tmp_path, hook_repository, {"id": HOOK_ID})
    many = {f"deploy/batch-{i}.yaml": deployment(f"batch-{i}", decode_gpus=64) for i in range(9)}
    write_files(root, many)
    git(root, "add", "--all")
    done = pre_commit(root, hook_repository, POOL, *many)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_hook_fails_a_rejected_deployment_naming_the_rule(
    hook_repository: HookRepository, tmp_path: Path
) -> None:
    root = project(tmp_path, hook_repository, {"id": HOOK_ID})
    done = pre_commit(root, hook_repository, POOL, BATCH, OVERSIZED)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Failed" in done.stdout
    assert f"- hook id: {HOOK_ID}" in done.stdout
    assert "verdict=rejected" in done.stdout
    assert REJECTED_RULE in done.stdout
    assert "v41-flash-b200-oversized" in done.stdout


def test_a_deployment_committed_without_its_pool_finds_it_in_the_repository(
    hook_repository: HookRepository, tmp_path: Path
) -> None:
    root = project(tmp_path, hook_repository, {"id": HOOK_ID})
    done = pre_commit(root, hook_repository, BATCH)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Passed" in done.stdout


def test_a_ref_found_nowhere_is_an_input_error_naming_it(
    hook_repository: HookRepository, tmp_path: Path
) -> None:
    root = project(tmp_path, hook_repository, {"id": HOOK_ID})
    done = pre_commit(root, hook_repository, LOST)
    assert done.returncode == 1, done.stdout + done.stderr  # pre-commit's own: the hook failed
    assert "exit code: 2" in done.stdout
    assert "hardware.ref 'nowhere-pool' names no HardwareManifest" in done.stdout
    assert "files git tracks under" in done.stdout
    assert "manifest.hardware-ref" not in done.stdout
