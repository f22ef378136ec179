"""One sweep at a time per database.

PostgreSQL: a session-level advisory lock, taken with pg_try_advisory_lock on a connection
held (in autocommit, so no transaction stays open) for the whole sweep; the server releases
it when that connection ends, so a replica killed mid-sweep frees it at once and another
replica (or the restarted one) resumes the sweep. SQLite: a lock in this process (SQLite
serves one host; run replicas on PostgreSQL).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, text

SWEEP_LOCK_KEY = 0x5347_5357  # "SGSW": the advisory lock id of "a sweep is running"
_local_locks: dict[str, threading.Lock] = {}
_local_guard = threading.Lock()


@contextmanager
def sweep_lock(engine: Engine) -> Iterator[bool]:
    """Yields True while this process holds the database's sweep lock, False if another does."""
    if engine.dialect.name != "postgresql":
        with _local_guard:
            lock = _local_locks.setdefault(str(engine.url), threading.Lock())
        if not lock.acquire(blocking=False):
            yield False
            return
        try:
            yield True
        finally:
            lock.release()
        return
    with engine.connect() as pooled:
        connection = pooled.execution_options(isolation_level="AUTOCOMMIT")
        held = bool(
            connection.execute(
                text("SELECT pg_try_advisory_lock(:key)"), {"key": SWEEP_LOCK_KEY}
            ).scalar_one()
        )
        try:
            yield held
        finally:
            if held:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": SWEEP_LOCK_KEY})
