"""`supportgate check --server` against a real `supportgate serve` process on a SQLite file."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from supportgate.config import DEFAULT_POLICY_DIR

from ..examples import expected, report_problems

SCRIPT = Path(sys.executable).with_name("supportgate")
READY_SECONDS = 60.0
UNKNOWN_KEY = "sg_" + "not-a-key"
_INHERITED_SETTINGS = (
    "SUPPORTGATE_DATABASE_URL",
    "SUPPORTGATE_OPA_URL",
    "SUPPORTGATE_TOKEN",
    "SUPPORTGATE_IDEMPOTENCY_SCOPE",
)


@dataclass(frozen=True)
class Server:
    url: str
    env: dict[str, str]
    keys: dict[str, str]  # role -> secret


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def supportgate(
    *argv: str, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *argv], env=env, capture_output=True, text=True, check=False, timeout=timeout
    )


def create_key(env: dict[str, str], role: str) -> str:
    created = supportgate("keys", "create", "--role", role, "--name", f"{role}-key", env=env)
    assert created.returncode == 0, created.stderr
    return created.stdout.strip().splitlines()[-1]


@contextmanager
def running_server(directory: Path) -> Iterator[Server]:
    """`supportgate serve` on a free port and a fresh SQLite file, with a ci and an admin key."""
    env = {k: v for k, v in os.environ.items() if k not in _INHERITED_SETTINGS}
    env["SUPPORTGATE_DATABASE_URL"] = f"sqlite:///{directory / 'supportgate.db'}"
    keys = {role: create_key(env, role) for role in ("ci", "admin")}
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = directory / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(SCRIPT), "serve", "--port", str(port)],
            env=env,
            cwd=directory,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_ready(url, process, log_path)
        yield Server(url=url, env=env, keys=keys)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def _wait_ready(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}:\n{log_path.read_text()}")
        try:
            if httpx.get(f"{url}/health/ready", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    pytest.fail(f"the server was not ready within {READY_SECONDS} s:\n{log_path.read_text()}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("server")) as running:
        yield running


def check(
    server: Server, *argv: str, token: str | None = None, scope: str = "test", **env: str
) -> subprocess.CompletedProcess[str]:
    options = ["--server", server.url]
    if token is not None:
        options += ["--token", token]
    run_env = {**server.env, "SUPPORTGATE_IDEMPOTENCY_SCOPE": scope, **env}
    return supportgate("check", *options, *argv, env=run_env)


def tracked(server: Server) -> dict[str, str]:
    """name -> latest decision id of every tracked manifest."""
    listed = httpx.get(
        f"{server.url}/v1/manifests",
        headers={"Authorization": f"Bearer {server.keys['admin']}"},
        params={"limit": 100},
    ).json()
    return {item["name"]: item["latest_decision"]["id"] for item in listed["items"]}


def _entries(server: Server) -> int:
    """The entries of the verifiable log, as `audit verify` counts them."""
    verified = supportgate("audit", "verify", env=server.env)
    assert verified.returncode == 0, verified.stderr
    found = re.search(r"([0-9]+) entries", verified.stdout)
    assert found is not None, verified.stdout
    return int(found[1])


def test_json_report_matches_expected_and_nothing_is_recorded(server: Server) -> None:
    """A dry run, evaluated now by the server: the rules may have grown since (evidence ages)."""
    wanted = expected()
    files = [str(path) for path in wanted.files]
    before = tracked(server), _entries(server)
    finished = check(server, "--format", "json", *files, token=server.keys["ci"], scope="json")
    assert finished.returncode == 1, finished.stderr
    report = json.loads(finished.stdout)
    assert report["gate"] == {"fail_on": "rejected", "status": "failed", "passed": False}
    assert [Path(r["source"]).name for r in report["results"]] == list(wanted.decisions)
    assert report_problems(report["results"]) == {}
    for result in report["results"]:
        decision = result["decision"]
        assert (decision["cause"], decision["matrix_version"]) == ("submission", "2026.11.1")
        assert (decision["id"], decision["recorded"]) == (None, False)
    assert (tracked(server), _entries(server)) == before


def test_record_posts_each_manifest_to_be_tracked(server: Server) -> None:
    wanted = expected()
    files = [str(path) for path in wanted.files]
    finished = check(server, "--record", "--format", "json", *files, token=server.keys["ci"])
    assert finished.returncode == 1, finished.stderr
    ids = {
        r["decision"]["manifest"]["name"]: r["decision"]["id"]
        for r in json.loads(finished.stdout)["results"]
    }
    assert {name: tracked(server)[name] for name in ids} == ids


def test_text_report_with_token_from_environment(server: Server) -> None:
    wanted = expected().decisions
    files = [str(path) for path in expected().files]
    finished = check(server, *files, scope="text", SUPPORTGATE_TOKEN=server.keys["ci"])
    assert finished.returncode == 1, finished.stderr
    count = Counter(want.verdict for want in wanted.values())
    summary = (
        f"{len(wanted)} manifests: {count['supported']} supported, "
        f"{count['experimental']} experimental, {count['rejected']} rejected; gate: failed"
    )
    assert summary in finished.stdout
    for name, want in wanted.items():
        line = next(line for line in finished.stdout.splitlines() if name in line)
        assert f"verdict={want.verdict}" in line


def test_passing_gate_is_exit_0(server: Server, examples_dir: Path) -> None:
    files = [str(examples_dir / n) for n in ("dep-b200-offline.yaml", "hw-b200-pool.yaml")]
    finished = check(server, *files, token=server.keys["ci"], scope="pass")
    assert finished.returncode == 0, finished.stderr
    assert "gate: passed" in finished.stdout


def test_rerun_in_the_same_scope_replays_the_first_answers(
    server: Server, examples_dir: Path
) -> None:
    pool = str(examples_dir / "hw-ascend950-pool.yaml")

    def decision_id(scope: str) -> str:
        finished = check(
            server, "--record", "--format", "json", pool, token=server.keys["ci"], scope=scope
        )
        assert finished.returncode == 0, finished.stderr
        return str(json.loads(finished.stdout)["results"][0]["decision"]["id"])

    first = decision_id("ci-job-1")
    assert decision_id("ci-job-1") == first  # a retry: answered from the stored response
    assert decision_id("ci-job-2") != first  # a new job: evaluated and recorded again


def test_bad_token_is_exit_2(server: Server, examples_dir: Path) -> None:
    finished = check(server, str(examples_dir / "hw-b200-pool.yaml"), token=UNKNOWN_KEY)
    assert finished.returncode == 2
    assert finished.stdout.startswith("ERROR  the server refused the key: unknown API key\n")
    assert "the server refused the key: unknown API key" in finished.stderr


def test_unreachable_server_is_exit_2(examples_dir: Path) -> None:
    nowhere = Server(url=f"http://127.0.0.1:{free_port()}", env=dict(os.environ), keys={})
    finished = check(nowhere, str(examples_dir / "hw-b200-pool.yaml"), token=UNKNOWN_KEY)
    assert finished.returncode == 2
    assert "cannot reach the supportgate server" in finished.stdout  # the report says it too
    assert "cannot reach the supportgate server" in finished.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--server", "http://127.0.0.1:9"], "--server: needs an API key"),
        (["--token", "sg_x"], "--token: needs --server"),
        (["--record"], "--record: records on a server only"),
        (["--server", "ftp://example", "--token", "sg_x"], "expected an http:// or https:// URL"),
        (
            ["--server", "http://127.0.0.1:9", "--token", "sg_x", "--matrix", "m.yaml"],
            "--matrix: applies to in-process checks only",
        ),
    ],
)
def test_usage_errors_are_exit_2(examples_dir: Path, argv: list[str], message: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in _INHERITED_SETTINGS}
    finished = supportgate("check", *argv, str(examples_dir / "hw-b200-pool.yaml"), env=env)
    assert finished.returncode == 2
    assert message in finished.stderr


def test_a_published_matrix_applies_to_the_next_check(tmp_path: Path, examples_dir: Path) -> None:
    """A fresh server (this one publishes): h100 turns supported under a matrix listing sm90."""
    pool = str(examples_dir / "hw-h100-pool-a.yaml")
    with running_server(tmp_path) as fresh:
        before = check(fresh, "--format", "json", pool, token=fresh.keys["ci"], scope="before")
        assert before.returncode == 0, before.stderr
        assert json.loads(before.stdout)["results"][0]["decision"]["verdict"] == "experimental"

        document = yaml.safe_load((DEFAULT_POLICY_DIR / "matrix" / "data.yaml").read_text())
        document["version"] = "2026.12.1-sm90"
        document["engines"]["deepinfer"]["platforms"].append(
            {"vendor": "nvidia", "arch": "sm90", "toolkit": {"name": "cuda", "min": "12.4"}}
        )
        published = httpx.post(
            f"{fresh.url}/v1/matrix",
            content=yaml.safe_dump(document).encode(),
            headers={
                "Authorization": f"Bearer {fresh.keys['admin']}",
                "Content-Type": "application/yaml",
            },
        )
        assert published.status_code == 201, published.text
        assert published.json()["published_by"] == "admin-key"

        after = check(fresh, "--format", "json", pool, token=fresh.keys["ci"], scope="after")
        assert after.returncode == 0, after.stderr
        decision = json.loads(after.stdout)["results"][0]["decision"]
        assert (decision["verdict"], decision["matrix_version"]) == ("supported", "2026.12.1-sm90")
