"""Nothing secret in a checkout: `supportgate serve` as ./scripts/serve runs it (no
configuration: its data in the working directory), started in a git working tree that holds
only the project's .gitignore, with a git matrix source to follow, makes its SQLite database,
its private checkpoint-signing key and the matrix source's cache there, and `git status` still
shows nothing to add."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import httpx

from ..matrix_upstreams import GitRepo, with_sm90
from ..server import clean_env, run_cli, supportgate_command
from ..services import free_port
from ..waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
GIT = shutil.which("git") or "git"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        [GIT, "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_serving_in_a_checkout_leaves_git_status_clean(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy(ROOT / ".gitignore", checkout / ".gitignore")
    _git(checkout, "init", "--quiet")
    _git(checkout, "add", ".gitignore")
    _git(checkout, "commit", "--quiet", "-m", "the project's .gitignore")
    matrix = GitRepo(tmp_path / "matrix")
    matrix.commit(with_sm90("2026.12.1"))
    env = clean_env(SUPPORTGATE_MATRIX_SOURCE=matrix.source())
    port = free_port()
    url = f"http://127.0.0.1:{port}"

    with (tmp_path / "serve.log").open("wb") as log:
        server = subprocess.Popen(
            [*supportgate_command(), "serve", "--port", str(port), "--bootstrap-admin-key"],
            cwd=checkout,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        wait_until(lambda: _answers(f"{url}/health/ready"), "the server to be ready")
        made = run_cli(
            ["keys", "create", "--role", "procurement", "--name", "p"], env=env, cwd=checkout
        )
        assert made.returncode == 0, made.stderr
        auth = {"Authorization": f"Bearer {made.stdout.splitlines()[-1]}"}

        def followed() -> bool:  # the source's matrix is published once its clone is made
            current = httpx.get(f"{url}/v1/matrix", headers=auth, timeout=10)
            return current.status_code == 200 and current.json()["version"] == "2026.12.1"

        wait_until(followed, "the git matrix source to be published")
        posted = httpx.post(
            f"{url}/v1/evaluations",
            content=(ROOT / "examples" / "manifests" / "hw-h100-pool-a.yaml").read_bytes(),
            headers={**auth, "Content-Type": "application/yaml"},
            timeout=30,
        )
        assert posted.status_code == 201, posted.text
    finally:
        server.terminate()
        server.wait(timeout=30)

    made_here = {path.name for path in checkout.iterdir()}
    assert {"supportgate.db", "supportgate-signing.key", "supportgate-matrix-cache"} <= made_here
    status = _git(checkout, "status", "--porcelain", "--untracked-files=all")
    assert status == "", f"serving left files git would add:\n{status}"
