"""A served supportgate and the OPA that pulls its bundle from it, as docker-compose runs them
(docs/opa.md): OPA fetches GET /v1/bundles/supportgate.tar.gz with the bundle token and
verifies it, and the service is ready once OPA holds its revision.

Issue 12: "A hung OPA (SIGSTOP) makes requests queue behind a lock held across a 30 s network
call (the k-th request waits k x 30 s)". No lock is held across a call to OPA now, and each
call has a deadline: k requests at once all wait on OPA together, and each gets a 503."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from ..api_support import example
from ..opa import RunningOpa, running_opa, shared_credentials
from ..server import Served, clean_env, make_keys, serving
from ..services import free_port
from ..waiting import wait_until

pytestmark = pytest.mark.opa

DEADLINE_S = 5.0  # long enough that every call is seen waiting before the first gives up
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


def _connections_to(port: int) -> int:
    """The established TCP connections on this machine to `port` (only the service calls OPA)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            remote, state = line.split()[2:4]
            count += state == "01" and int(remote.rsplit(":", 1)[1], 16) == port
    return count


def test_a_hung_opa_costs_each_request_one_deadline(
    served: tuple[Served, RunningOpa, str],
) -> None:
    server, opa, key = served
    assert _post(server, key, "hw-h100-pool-a.yaml").status_code == 201
    opa_port = int(opa.url.rsplit(":", 1)[1])

    os.kill(opa.process.pid, signal.SIGSTOP)
    try:
        with (
            httpx.Client(limits=httpx.Limits(max_connections=CONCURRENT)) as client,
            ThreadPoolExecutor(CONCURRENT) as pool,
        ):
            sent = [
                pool.submit(_post, server, key, "hw-b200-pool.yaml", client)
                for _ in range(CONCURRENT)
            ]
            # Queued behind one another (a lock held across the call), one request at a time
            # would wait on the stopped OPA, and the last one CONCURRENT deadlines; here every
            # request waits on OPA at once, so each waits one deadline.
            wait_until(
                lambda: _connections_to(opa_port) >= CONCURRENT,
                f"{CONCURRENT} calls waiting on the stopped OPA at once",
            )
            statuses = [answer.result().status_code for answer in sent]
    finally:
        os.kill(opa.process.pid, signal.SIGCONT)
    assert statuses == [503] * CONCURRENT

    assert _post(server, key, "hw-b200-pool.yaml").status_code == 201  # OPA is back
