"""When the database or the policy engine cannot serve, POST /v1/evaluations is a 503 that
carries no verdict and records nothing, and /health/ready says which one is down."""

from __future__ import annotations

import socket
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from supportgate.db import database_url

from ..api import Api, running_api
from ..api_support import Rows, created, example, hardware, post, rows
from ..opa import running_opa
from ..services import drop_database


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def lose_database(request: pytest.FixtureRequest, db_url: str) -> Callable[[Api], None]:
    """A function that takes the API's database away: the SQLite file is removed (a directory
    takes its place) and the pool's connections dropped; the PostgreSQL database is dropped."""
    if db_url.startswith("sqlite"):
        path = Path(str(make_url(db_url).database))

        def lose_sqlite(api: Api) -> None:
            for file in path.parent.glob(path.name + "*"):
                file.unlink()
            path.mkdir()
            api.runtime.db.dispose()

        return lose_sqlite
    admin_url = request.getfixturevalue("postgres_url")
    name = make_url(db_url).database

    def lose_postgres(_: Api) -> None:
        admin = create_engine(
            database_url(admin_url), poolclass=NullPool, isolation_level="AUTOCOMMIT"
        )
        try:
            assert name is not None
            drop_database(admin, name)
        finally:
            admin.dispose()

    return lose_postgres


def _assert_unavailable(response: Any) -> None:
    assert response.status_code == 503, response.text
    assert response.headers.get("retry-after") == "5"
    body = response.json()
    assert body["status_code"] == 503
    assert not {"verdict", "allowed", "violations", "id"} & set(body)


def test_a_lost_database_is_503_and_never_a_verdict(
    api: Api, lose_database: Callable[[Api], None]
) -> None:
    created(api, hardware("pool-a"))
    lose_database(api)

    _assert_unavailable(post(api, hardware("pool-b")))
    _assert_unavailable(post(api, hardware("pool-c"), **{"Idempotency-Key": "retry-me"}))
    _assert_unavailable(
        api.client.get("/v1/manifests/HardwareManifest/pool-a", headers=api.headers("admin"))
    )

    ready = api.client.get("/health/ready")
    assert ready.status_code == 503
    checks = ready.json()["checks"]
    assert checks["database"] != "ok"
    assert checks["policy_engine"] == "ok"
    assert ready.json()["status"] == "unavailable"
    assert api.client.get("/health/live").status_code == 200

    # Metrics still serve what this process knows, so the outage can be seen.
    metrics = api.client.get("/metrics")
    assert metrics.status_code == 200
    assert 'route="/v1/evaluations",status="503"' in metrics.text


def test_an_unreachable_policy_engine_is_503_and_records_nothing(db_url: str) -> None:
    with running_api(db_url, opa_url=f"http://127.0.0.1:{_closed_port()}") as api:
        _assert_unavailable(post(api, example("hw-b200-pool.yaml")))
        _assert_unavailable(post(api, hardware("pool-a"), **{"Idempotency-Key": "k-1"}))
        assert rows(api) == Rows(decisions=0, decision_rules=0, manifests=0, idempotency_keys=0)

        ready = api.client.get("/health/ready")
        assert ready.status_code == 503
        checks = ready.json()["checks"]
        assert checks["database"] == "ok"
        assert checks["policy_engine"] != "ok"


def test_a_policy_engine_that_goes_away_is_503(opa_binary: str, tmp_path: Path) -> None:
    with ExitStack() as opa:
        opa_url = opa.enter_context(running_opa(opa_binary)).url
        with running_api(f"sqlite:///{tmp_path / 'supportgate.db'}", opa_url=opa_url) as api:
            decided = created(api, hardware("pool-a"))
            assert decided["verdict"] == "experimental"
            assert api.client.get("/health/ready").status_code == 200
            before = rows(api)

            opa.close()  # OPA stops
            _assert_unavailable(post(api, hardware("pool-a", nodes=2)))
            assert rows(api) == before
            assert api.client.get("/health/ready").status_code == 503
            tracked = api.client.get(
                "/v1/manifests/HardwareManifest/pool-a", headers=api.headers("procurement")
            ).json()
            assert tracked["latest_decision"]["id"] == decided["id"]
            assert tracked["content"]["spec"]["nodes"] == 8
