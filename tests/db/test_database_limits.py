"""PostgreSQL's limits as requests meet them: a table locked by another transaction is a quick
503 naming the lock timeout (not a request held for as long as the lock is), whether the
decision is written in a thread or by the writer process; and readiness that notices the
schema's tables are gone."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import psycopg
import pytest

from supportgate.config import DatabaseTimeouts
from supportgate.db import database_url

from ..api import Api, running_api
from ..api_support import example, post
from ..services import temporary_database

pytestmark = pytest.mark.postgres
RELEASE_AFTER_S = 60.0
"""A safety net only: the lock is released then, so a request that waits for it ends."""


@pytest.fixture
def postgres_db(postgres_url: str, postgres_template: str) -> Iterator[str]:
    with temporary_database(postgres_url, template=postgres_template) as url:
        yield url


def _driver_url(url: str) -> str:
    return database_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def test_a_locked_table_is_a_quick_503_naming_the_lock_timeout(postgres_db: str) -> None:
    timeouts = DatabaseTimeouts(statement=30.0, lock=0.5)
    with running_api(postgres_db, database_timeouts=timeouts) as api:
        assert post(api, example("hw-h100-pool-a.yaml")).status_code == 201
        released = threading.Event()
        with psycopg.connect(_driver_url(postgres_db)) as locker:
            locker.execute("LOCK TABLE ledger_head IN EXCLUSIVE MODE")

            def release() -> None:
                released.set()
                locker.rollback()

            safety = threading.Timer(RELEASE_AFTER_S, release)
            safety.start()
            try:
                answer = post(api, example("hw-b200-pool.yaml"))
                answered_while_locked = not released.is_set()
            finally:
                safety.cancel()
        assert answered_while_locked, "the request waited for the lock to be released"
        assert answer.status_code == 503, answer.text
        assert "lock_timeout" in answer.json()["detail"]
        assert answer.headers["retry-after"]
        assert post(api, example("hw-b200-pool.yaml")).status_code == 201  # and then it works


def _ready(api: Api) -> tuple[int, dict[str, str]]:
    response = api.client.get("/health/ready")
    return response.status_code, response.json()["checks"]


def test_readiness_names_a_table_renamed_away_and_recovers(postgres_db: str) -> None:
    with running_api(postgres_db) as api, psycopg.connect(_driver_url(postgres_db)) as admin:
        admin.autocommit = True
        assert _ready(api) == (200, {"database": "ok", "ledger": "ok", "policy_engine": "ok"})
        admin.execute("ALTER TABLE decisions RENAME TO decisions_away")
        status, checks = _ready(api)
        assert status == 503
        assert "decisions" in checks["database"]
        assert checks["policy_engine"] == "ok"
        admin.execute("ALTER TABLE decisions_away RENAME TO decisions")
        assert _ready(api) == (200, {"database": "ok", "ledger": "ok", "policy_engine": "ok"})
