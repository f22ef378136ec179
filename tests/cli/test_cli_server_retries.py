"""`check --server` on an unreliable network: the real app behind a transport that fails.

The transport forwards each request to the in-process API (SQLite and PostgreSQL), after or
instead of failing as a network or an overloaded server would.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from supportgate.errors import PolicyEngineUnavailable, UsageError
from supportgate.evaluations.check import read_manifest_files
from supportgate.evaluations.remote import (
    RETRY_ATTEMPTS,
    RETRY_MAX_DELAY_S,
    Server,
    check_remote,
    dry_run_batches,
)
from supportgate.evaluations.sourced import SourcedManifest
from supportgate.reports import Report, gate_failed, render

from ..api import Api

Handler = Callable[[httpx.Request], httpx.Response]
FAKE_KEY = "sg_" + "fake"


def forward(api: Api) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        answer = api.client.post(
            request.url.path,
            content=request.content,
            headers={
                name: request.headers[name]
                for name in ("authorization", "content-type", "idempotency-key")
                if name in request.headers
            },
        )
        return httpx.Response(answer.status_code, content=answer.content, headers=answer.headers)

    return handler


def run(
    files: list[Path],
    handler: Handler,
    *,
    token: str = FAKE_KEY,
    fmt: str = "json",
    record: bool = True,
) -> tuple[bool, Any, list[float]]:
    """`check --server` (`--record` unless `record` is false) through `handler`."""
    sleeps: list[float] = []
    results = check_remote(
        read_manifest_files([str(path) for path in files]).manifests,
        Server(url="http://supportgate.test/", token=token, idempotency_scope="test"),
        record=record,
        transport=httpx.MockTransport(handler),
        sleep=sleeps.append,
    )
    failed = any(gate_failed(result.decision, "rejected") for result in results)
    output = render(Report(results), fmt)
    return failed, json.loads(output) if fmt == "json" else output, sleeps


def history(api: Api, kind: str, name: str) -> list[dict[str, Any]]:
    response = api.client.get(
        f"/v1/manifests/{kind}/{name}/history", headers=api.headers("procurement")
    )
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def test_a_lost_response_is_retried_and_recorded_once(api: Api, examples_dir: Path) -> None:
    """The server recorded the decision, the answer was lost: the retry gets the same one."""
    app = forward(api)
    seen: list[httpx.Request] = []

    def flaky(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = app(request)
        if len(seen) == 1:
            raise httpx.ReadError("connection reset by peer", request=request)
        return answer

    failed, report, sleeps = run([examples_dir / "hw-b200-pool.yaml"], flaky, token=api.keys["ci"])
    assert not failed
    assert sleeps == [0.5]
    assert len({request.headers["idempotency-key"] for request in seen}) == 1
    recorded = history(api, "HardwareManifest", "b200-pool")
    assert [item["id"] for item in recorded] == [report["results"][0]["decision"]["id"]]


def test_hardware_goes_first_and_each_document_is_sent_alone(
    api: Api, examples_dir: Path, tmp_path: Path
) -> None:
    deployment = examples_dir / "dep-h100-port-trial.yaml"
    bundle = tmp_path / "pool-and-offline.yaml"
    bundle.write_text(
        (examples_dir / "dep-b200-offline.yaml").read_text()
        + "---\n"
        + (examples_dir / "hw-b200-pool.yaml").read_text()
    )
    pool = examples_dir / "hw-h100-pool-a.yaml"
    app = forward(api)
    seen: list[httpx.Request] = []

    def recording(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return app(request)

    failed, report, _ = run([deployment, bundle, pool], recording, token=api.keys["ci"])
    assert not failed
    assert [Path(r["source"]).name for r in report["results"]] == [
        "dep-h100-port-trial.yaml",
        "pool-and-offline.yaml",
        "pool-and-offline.yaml",
        "hw-h100-pool-a.yaml",
    ]
    assert [r["decision"]["verdict"] for r in report["results"]] == [
        "experimental",  # its hardware.ref resolved on the server: the pool was sent first
        "supported",
        "supported",
        "experimental",
    ]
    kinds = [json.loads(request.content)["kind"] for request in seen]
    assert kinds == ["HardwareManifest"] * 2 + ["DeploymentManifest"] * 2
    assert all(r.headers["content-type"] == "application/json" for r in seen)
    assert len({r.headers["idempotency-key"] for r in seen}) == 4


def test_503_is_retried_with_retry_after_then_gives_up(examples_dir: Path) -> None:
    calls: list[httpx.Request] = []

    def overloaded(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(
            503, json={"status_code": 503, "detail": "busy"}, headers={"Retry-After": "5"}
        )

    with pytest.raises(PolicyEngineUnavailable, match=r"could not evaluate it \(503\): busy"):
        run([examples_dir / "hw-b200-pool.yaml"], overloaded)
    assert len(calls) == RETRY_ATTEMPTS


def test_503_then_success(sqlite_api: Api, examples_dir: Path) -> None:
    app = forward(sqlite_api)
    calls: list[int] = []

    def recovering(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            return httpx.Response(503, json={"detail": "busy"}, headers={"Retry-After": "60"})
        return app(request)

    failed, _, sleeps = run(
        [examples_dir / "hw-b200-pool.yaml"], recovering, token=sqlite_api.keys["ci"]
    )
    assert not failed
    assert sleeps == [RETRY_MAX_DELAY_S]  # Retry-After, capped


def test_a_4xx_names_file_manifest_and_field(examples_dir: Path) -> None:
    def refusing(_: httpx.Request) -> httpx.Response:
        body = {"status_code": 400, "detail": "Expected `int` >= 1", "field": "$.spec.nodes"}
        return httpx.Response(400, json=body)

    pool = examples_dir / "hw-b200-pool.yaml"
    with pytest.raises(UsageError) as caught:
        run([pool], refusing)
    message = str(caught.value)
    assert str(pool) in message
    assert "HardwareManifest 'b200-pool'" in message
    assert "Expected `int` >= 1 (field $.spec.nodes)" in message


@pytest.mark.parametrize("status", [401, 403])
def test_refused_key(examples_dir: Path, status: int) -> None:
    def refusing(_: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json={"status_code": status, "detail": "unknown API key"})

    with pytest.raises(UsageError, match="the server refused the key: unknown API key"):
        run([examples_dir / "hw-b200-pool.yaml"], refusing)


def test_not_a_supportgate_server(examples_dir: Path) -> None:
    def teapot(_: httpx.Request) -> httpx.Response:
        return httpx.Response(201, text="<html>hello</html>")

    with pytest.raises(PolicyEngineUnavailable, match="not a supportgate decision"):
        run([examples_dir / "hw-b200-pool.yaml"], teapot)


def test_server_options() -> None:
    env = {"SUPPORTGATE_TOKEN": FAKE_KEY}
    assert Server.from_options("http://h", None, env).token == FAKE_KEY
    flag = FAKE_KEY + "-flag"
    assert Server.from_options("http://h", flag, env).token == flag
    with pytest.raises(UsageError, match="--server: needs an API key"):
        Server.from_options("http://h", None, {})
    with pytest.raises(UsageError, match="--token: needs --server"):
        Server.from_options(None, "sg_flag", {})
    with pytest.raises(UsageError, match="--at: applies to in-process checks only"):
        Server.from_options("http://h", "k", {}, in_process_only={"--matrix": None, "--at": 1})
    for bad in ("h:80", "file:///x", "http://"):
        with pytest.raises(UsageError, match="--server"):
            Server.from_options(bad, "k", {})


def test_idempotency_scope() -> None:
    github = {"GITHUB_RUN_ID": "7", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_JOB": "gate"}
    scope = Server.from_options("http://h", "k", github).idempotency_scope
    assert scope == Server.from_options("http://h", "k", github).idempotency_scope
    rerun = {**github, "GITHUB_RUN_ATTEMPT": "3"}
    assert scope != Server.from_options("http://h", "k", rerun).idempotency_scope
    explicit = {**github, "SUPPORTGATE_IDEMPOTENCY_SCOPE": "mine"}
    assert Server.from_options("http://h", "k", explicit).idempotency_scope == "mine"
    assert Server.from_options("http://h", "k", {"CI_JOB_ID": "9"}).idempotency_scope.endswith("9")
    random = {Server.from_options("http://h", "k", {}).idempotency_scope for _ in range(2)}
    assert len(random) == 2  # outside CI: one scope per invocation


def test_a_dry_run_sends_the_files_together_and_records_nothing(
    api: Api, examples_dir: Path
) -> None:
    app = forward(api)
    seen: list[httpx.Request] = []

    def recording(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return app(request)

    files = [examples_dir / "dep-h100-port-trial.yaml", examples_dir / "hw-h100-pool-a.yaml"]
    failed, report, _ = run(files, recording, token=api.keys["ci"], record=False)
    assert not failed
    assert [r["decision"]["verdict"] for r in report["results"]] == ["experimental"] * 2
    [request] = seen
    assert request.url.path == "/v1/evaluations/dry-run"
    assert "idempotency-key" not in request.headers
    sent = json.loads(request.content)["manifests"]
    assert [m["kind"] for m in sent] == ["HardwareManifest", "DeploymentManifest"]
    untracked = api.client.get(
        "/v1/manifests/HardwareManifest/h100-pool-a", headers=api.headers("procurement")
    )
    assert untracked.status_code == 404


def test_a_dry_runs_4xx_names_the_file_of_the_manifest_it_names(examples_dir: Path) -> None:
    def refusing(_: httpx.Request) -> httpx.Response:
        body = {"status_code": 403, "detail": "not yours", "field": "$.manifests[1].metadata"}
        return httpx.Response(400, json=body)

    pool, deployment = examples_dir / "hw-b200-pool.yaml", examples_dir / "dep-b200-offline.yaml"
    with pytest.raises(UsageError) as caught:
        run([deployment, pool], refusing, record=False)
    assert f"{deployment}: DeploymentManifest 'v41-flash-b200-batch'" in str(caught.value)


def test_dry_run_batches_carry_the_pools_their_deployments_name(examples_dir: Path) -> None:
    [pool] = read_manifest_files([str(examples_dir / "hw-h100-pool-a.yaml")]).manifests
    [trial] = read_manifest_files([str(examples_dir / "dep-h100-port-trial.yaml")]).manifests

    def renamed(item: SourcedManifest, name: str) -> SourcedManifest:
        metadata = msgspec.structs.replace(item.manifest.metadata, name=name)
        return replace(item, manifest=msgspec.structs.replace(item.manifest, metadata=metadata))

    items = [pool, *(renamed(trial, f"trial-{n}") for n in range(5)), renamed(pool, "spare")]
    order = [0, 6, 1, 2, 3, 4, 5]  # hardware first
    assert dry_run_batches(items, order, limit=3) == [
        ([0, 6, 1], []),
        ([2, 3], [0]),
        ([4, 5], [0]),
    ]
    assert dry_run_batches(items, order) == [(order, [])]
