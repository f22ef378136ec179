"""A served supportgate and the OPA that pulls its bundle from it, as docker-compose runs them
(docs/opa.md): OPA fetches GET /v1/bundles/supportgate.tar.gz with the bundle token and
verifies it, and the service is ready once OPA holds its revision.

Issue 12: "A hung OPA (SIGSTOP) makes requests queue behind a lock held across a 30 s network
call (the k-th request waits k x 30 s)". No lock is held across a call to OPA now, and each
call has a deadline: k requests at once each get a 503 within about one deadline."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from ..api_support import example
from ..opa import RunningOpa, running_opa, shared_credentials
from ..server import Served, clean_env, make_keys, serving
from ..services import free_port

pytestmark = pytest.mark.opa

DEADLINE_S = 1.0
CONCURRENT = 8


@pytest.fixture
def served(opa_binary: str, tmp_path: Path) -> Iterator[tuple[Served, RunningOpa, str]]:
    """The service and its OPA, pulling from it; and a ci key."""
    port = free_port()
    database = f"sqlite:///{tmp_path / 'supportgate.db'}"
    key = make_keys(database)["ci"]
    env = clean_env(
        SUPPORTGATE_DATABASE_URL=database,
        SUPPORTGATE_OPA_TIMEOUT=str(DEADLINE_S),
        **shared_credentials().env(),
    )
    bundles = f"http://127.0.0.1:{port}/v1/bundles"
    with running_opa(opa_binary, bundle_service=bundles) as opa:
        env["SUPPORTGATE_OPA_URL"] = opa.url
        with serving(tmp_path, env=env, port=port, ready_path="/health/ready") as server:
            yield server, opa, key


def _post(
    server: Served, key: str, name: str, client: httpx.Client | None = None
) -> httpx.Response:
    send = client.post if client else httpx.post
    return send(
        f"{server.url}/v1/evaluations",
        content=json.dumps(example(name)).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        timeout=60,
    )


def test_opa_pulls_the_bundle_from_the_service_and_decides(
    served: tuple[Served, RunningOpa, str],
) -> None:
    server, opa, key = served
    # Ready means OPA pulled the service's bundle, verified it and holds its revision.
    assert _post(server, key, "hw-h100-pool-a.yaml").json()["verdict"] == "experimental"
    revision = httpx.get(
        f"{opa.url}/v1/data/system/bundles/supportgate/manifest/revision",
        headers=opa.credentials.headers(),
        timeout=10,
    ).json()["result"]
    fetched = httpx.get(
        f"{server.url}/v1/bundles/supportgate.tar.gz",
        headers={"Authorization": f"Bearer {opa.credentials.bundle_token}"},
        timeout=10,
    )
    assert fetched.headers["etag"] == f'"{revision}"'


def test_a_hung_opa_costs_each_request_one_deadline(
    served: tuple[Served, RunningOpa, str],
) -> None:
    server, opa, key = served
    assert _post(server, key, "hw-h100-pool-a.yaml").status_code == 201

    def timed(client: httpx.Client) -> tuple[int, float]:
        start = time.monotonic()
        response = _post(server, key, "hw-b200-pool.yaml", client)
        return response.status_code, time.monotonic() - start

    os.kill(opa.process.pid, signal.SIGSTOP)
    try:
        with (
            httpx.Client(limits=httpx.Limits(max_connections=CONCURRENT)) as client,
            ThreadPoolExecutor(CONCURRENT) as pool,
        ):
            answers = list(pool.map(timed, [client] * CONCURRENT))
    finally:
        os.kill(opa.process.pid, signal.SIGCONT)
    assert [status for status, _ in answers] == [503] * CONCURRENT
    # Queued behind one another, the last would wait CONCURRENT deadlines (8 s); each waits
    # one (and a follow-up call for the 503's reason never happens: the first call timed out).
    slowest = max(elapsed for _, elapsed in answers)
    assert slowest < 3 * DEADLINE_S, answers

    assert _post(server, key, "hw-b200-pool.yaml").status_code == 201  # OPA is back
