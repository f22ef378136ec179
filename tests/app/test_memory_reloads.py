"""What the service keeps in memory is re-read once when it expires, not once per request in
flight (a burst of 64 requests at the moment a cache expires must not become 64 queries, each
on a connection of its own); a revoked key stops working after the next read."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, event, text

from supportgate.auth.services import REFRESH_SECONDS, KeyService
from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.db import session_factory
from supportgate.events import Events
from supportgate.ledger.writer import LedgerWriter
from supportgate.matrix import load_matrix_file
from supportgate.matrix.services import RELOAD_SECONDS, MatrixService
from supportgate.policy.bundle import PolicyBundle

from ..clock import FakeClock

CALLERS = 16


def statements_on(engine: Engine, table: str) -> list[str]:
    """Every statement naming `table` from now on; each one takes a while, so callers overlap."""
    seen: list[str] = []
    gate = threading.Event()

    def record(*args: Any) -> None:
        if table in str(args[2]):
            seen.append(str(args[2]))
            gate.wait(0.05)

    event.listen(engine, "before_cursor_execute", record)
    return seen


def at_once(work: Callable[[], Any]) -> list[Any]:
    """`work` from CALLERS threads released together."""
    start = threading.Barrier(CALLERS)
    results: list[Any] = [None] * CALLERS

    def run(index: int) -> None:
        start.wait()
        results[index] = work()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(CALLERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _principal(keys: KeyService, secret: str) -> Any:
    """As the API guard asks: memory when it is fresh, else a read (in a thread)."""
    return keys.authenticate(secret, may_read=not keys.fresh())


def test_stale_keys_are_read_once_by_a_burst(migrated_db: Engine) -> None:
    clock = FakeClock()
    keys = KeyService(session_factory(migrated_db), clock=clock)
    secret = keys.create(name="ci-bot", role="ci").key
    assert _principal(keys, secret).name == "ci-bot"

    reads = statements_on(migrated_db, "FROM api_keys")
    clock.advance(REFRESH_SECONDS + 1)
    principals = at_once(lambda: _principal(keys, secret))

    assert {p.name for p in principals} == {"ci-bot"}
    assert len(reads) == 1

    with migrated_db.begin() as connection:  # revoked behind the service's back
        connection.execute(text("UPDATE api_keys SET revoked_at = CURRENT_TIMESTAMP"))
    assert _principal(keys, secret) is not None  # memory is less than REFRESH_SECONDS old
    clock.advance(REFRESH_SECONDS)
    assert _principal(keys, secret) is None
    assert _principal(keys, secret) is None  # and not answered from memory afterwards


def test_stale_matrix_versions_are_read_once_by_a_burst(migrated_db: Engine) -> None:
    clock = FakeClock()
    sessions = session_factory(migrated_db)
    matrices = MatrixService(sessions, ledger=LedgerWriter(sessions, events=Events()), clock=clock)
    bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
    matrices.ensure_default(load_matrix_file(bundle.default_matrix_path))
    first = matrices.current().version

    reads = statements_on(migrated_db, "matrix_versions")
    clock.advance(RELOAD_SECONDS + 1)
    versions = at_once(lambda: matrices.current().version)

    assert set(versions) == {first}
    assert len(reads) == 1
