"""Locks that hold across the service's processes, one per key. PostgreSQL: a session-level
advisory lock on a connection held (in autocommit: no transaction stays open) as long as the
lock, so a replica killed while holding it frees it at once. SQLite: a lock in this process
(SQLite serves one host; run replicas on PostgreSQL).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, text

_local_locks: dict[tuple[str, int], threading.Lock] = {}
_local_guard = threading.Lock()


@contextmanager
def advisory_lock(engine: Engine, key: int) -> Iterator[bool]:
    """Yields False if another holder has it (never waits)."""
    if engine.dialect.name != "postgresql":
        with _local_guard:
            lock = _local_locks.setdefault((str(engine.url), key), threading.Lock())
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
            connection.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": key}).scalar_one()
        )
        try:
            yield held
        finally:
            if held:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
