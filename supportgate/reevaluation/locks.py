"""One sweep at a time per database: the advisory lock `SWEEP_LOCK_KEY`
(supportgate/db/locks.py), held for the whole sweep, so a replica killed mid-sweep frees it
at once and another replica (or the restarted one) resumes the sweep."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine

from supportgate.db.locks import advisory_lock

SWEEP_LOCK_KEY = 0x5347_5357  # "SGSW": the advisory lock id of "a sweep is running"


@contextmanager
def sweep_lock(engine: Engine) -> Iterator[bool]:
    """Yields True while this process holds the database's sweep lock, False if another does."""
    with advisory_lock(engine, SWEEP_LOCK_KEY) as held:
        yield held
