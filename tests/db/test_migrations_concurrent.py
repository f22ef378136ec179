"""Replicas (or uvicorn workers) that start together on one PostgreSQL database all upgrade
the schema at once; the advisory lock makes them take turns, and every one succeeds."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from supportgate.db.migrate import current_revision, head_revision, upgrade

from ..services import temporary_database


@pytest.mark.postgres
def test_concurrent_upgrades_take_turns(postgres_url: str) -> None:
    with temporary_database(postgres_url) as url:
        pool = ThreadPoolExecutor(max_workers=4)
        upgrades = [pool.submit(upgrade, url) for _ in range(4)]
        try:
            # Without the lock concurrent DDL deadlocks or collides; bound the wait.
            assert [done.result(timeout=60) for done in upgrades] == [None] * 4
            assert current_revision(url) == head_revision()
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
