"""The ledger's writer: runs write.apply_batch, in group commits, and publishes the events.

    append(write) -> position      a submission's decision, from the event loop: queued,
                                   written with the others queued meanwhile, awaited
    submit(write) -> Future        the same from a thread
    write(batch) -> Applied        a batch of its own (a sweep's, a matrix version, a waiver,
                                   an untracking), now, in its own transaction; waited for

The writer thread takes every decision queued (up to MAX_BATCH) and applies them as ONE batch:
one head lock, one commit, however many requests wait. A future resolves only after the
commit, so a 201 always means the decision is durable; any failure fails every request of
the group (the API answers 503 naming the cause: a driver's error as it is, anything else
as LedgerWriteFailed) and the writer goes on with the next group. A writer that is not
running, or whose last write failed while the database still refuses a write, says so in
`check_ready` (the readiness check). If the group hits a uniqueness conflict (an
Idempotency-Key that another process stored first), it is rolled back and its decisions
are written one transaction each, so only the conflicting one fails, with
IdempotencyConflict.

After each commit, and before the waiting requests hear of it, the events of the result
are published (supportgate.events.Events), here, in the service's process. With
`writes_in_process` the same group commits (`commit_group`, `apply_alone`) run in a child
process instead (writer_process.py); the events still come back to be published here.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import transaction
from supportgate.db.engine import busy_error
from supportgate.errors import DatabaseBusy, DatabaseError, SupportgateError
from supportgate.events import Event, Events
from supportgate.logging import get_logger

from .batches import Applied, Batch, DecisionWrite
from .log import TreeEdge, touch_head
from .write import apply_batch

MAX_BATCH = 256
FAILURE_HOLD_S = 30.0
"""After a failed write, how long readiness says so unless a write succeeds (check_ready)."""
log = get_logger(__name__)

Position = int | None
"""Where a decision went in the log (None: not admitted, see DecisionWrite.expected)."""


class IdempotencyConflict(SupportgateError):
    """The Idempotency-Key already holds a stored response (another request stored it first)."""


class LedgerWriteFailed(DatabaseError):
    """The ledger could not record a write for a reason other than a driver's error (a full
    disk under the service's log, a bug), or its writer is not running; the message says
    which (HTTP 503)."""


def _cause(exc: BaseException) -> str:
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return f"{type(exc).__name__}: {reason[0]}" if reason else type(exc).__name__


def _refused(exc: BaseException) -> bool:
    """Whether a failed write says the database refuses writes (readiness)."""
    if isinstance(exc, IntegrityError | DatabaseBusy):
        return False
    if isinstance(exc, DBAPIError):
        return busy_error(exc) is None
    return isinstance(exc, DatabaseError)


def apply_alone(
    sessions: sessionmaker[Session], batch: Batch, now: datetime, edge: TreeEdge
) -> Applied:
    """Apply `batch` in one transaction of its own; `now` is its recorded_at (the writer's
    clock, read by whoever hands the batch over: data, so it crosses to a writer process);
    `edge` the tree's frontier this writer keeps between its transactions (log.TreeEdge)."""
    try:
        with transaction(sessions, write=True) as session:
            return apply_batch(session, batch, now, edge)
    except (SupportgateError, DBAPIError):
        raise
    except Exception as exc:  # whatever it is, the writer's callers hear of it as a 503
        raise LedgerWriteFailed(f"the ledger could not record the write: {_cause(exc)}") from exc


def commit_group(
    sessions: sessionmaker[Session], writes: Sequence[DecisionWrite], now: datetime, edge: TreeEdge
) -> tuple[list[Position | Exception], list[Event]]:
    """Apply many requests' decisions as one batch, recorded at `now`: per write its
    position or why not, and the events of what was committed.

    A uniqueness conflict (an Idempotency-Key another process stored first) rolls the group
    back and writes each decision alone, so only the conflicting one fails, with
    IdempotencyConflict; any other failure fails them all (the API answers 503)."""
    try:
        applied = apply_alone(sessions, Batch(decisions=list(writes)), now, edge)
    except IntegrityError:
        outcomes: list[Position | Exception] = []
        events: list[Event] = []
        for write in writes:
            outcome, alone = _commit_alone(sessions, write, now, edge)
            outcomes.append(outcome)
            events.extend(alone)
        return outcomes, events
    except Exception as exc:  # every waiting request must hear of it
        log.exception("decisions_not_recorded", count=len(writes))
        return [exc] * len(writes), []
    return list(applied.decisions), applied.events


def _commit_alone(
    sessions: sessionmaker[Session], write: DecisionWrite, now: datetime, edge: TreeEdge
) -> tuple[Position | Exception, list[Event]]:
    try:
        applied = apply_alone(sessions, Batch(decisions=[write]), now, edge)
    except IntegrityError as exc:
        return IdempotencyConflict(str(exc.orig)), []
    except Exception as exc:  # the waiting request must hear of it
        return exc, []
    return applied.decisions[0], applied.events


@dataclass(slots=True)
class Pending:
    """A decision handed over, and whoever waits for it: a thread's future (`submit`) or the
    event loop's (`append`)."""

    write: DecisionWrite
    future: Future[Position] | asyncio.Future[Position]


def settle(outcomes: Iterable[tuple[Pending, Position | BaseException]]) -> None:
    """Resolve handed-over decisions' futures from any thread. The event loop's futures are
    resolved in the loop, one callback per loop for all of them: a group commit wakes the
    loop once, not once per request."""
    in_loops: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Position], Any]]] = {}
    for pending, outcome in outcomes:
        future = pending.future
        if isinstance(future, asyncio.Future):
            in_loops.setdefault(future.get_loop(), []).append((future, outcome))
        elif not future.done():
            _resolve(future, outcome)
    for loop, futures in in_loops.items():
        try:
            loop.call_soon_threadsafe(_resolve_all, futures)
        except RuntimeError:  # the loop has closed: nobody waits any more
            continue


def _resolve_all(futures: list[tuple[asyncio.Future[Position], Position | BaseException]]) -> None:
    for future, outcome in futures:
        if not future.done():  # a request cancelled meanwhile (its client went away)
            _resolve(future, outcome)


def _resolve(
    future: Future[Position] | asyncio.Future[Position], outcome: Position | BaseException
) -> None:
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


class LedgerWriter:
    """The writer in a thread of the service (see the module doc)."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        events: Events,
        clock: Clock = SYSTEM_CLOCK,
        max_batch: int = MAX_BATCH,
    ) -> None:
        """`clock`: what time the decisions are recorded at (recorded_at, alerts, outbox)."""
        self._sessions = sessions
        self._events = events
        self._clock = clock
        self._edge = TreeEdge()  # shared by the writer thread and write()'s callers
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[Pending | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._failure: tuple[float, str] | None = None
        """When (monotonic) and why the last write failed, until one succeeds."""

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="ledger-writer", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Write what is queued, then end the writer."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def check_ready(self) -> None:
        """Raise LedgerWriteFailed when this writer cannot record: it is not running, or a
        write failed in the last FAILURE_HOLD_S and none succeeded since, or one failed
        earlier and the database still refuses a write that changes nothing (log.touch_head).
        The hold because a small write may pass where a decision's does not (a disk nearly
        full); the probe so that ready comes back without a request risking a failure."""
        if not self.running:
            raise _not_running()
        failure = self._failure
        if failure is None:
            return
        failed_at, cause = failure
        if self._clock.monotonic() - failed_at < FAILURE_HOLD_S:
            raise LedgerWriteFailed(f"the database refused the last write: {cause}")
        try:
            with transaction(self._sessions) as session:
                touch_head(session)
        except Exception as exc:  # whatever refuses the write, readiness names it
            raise LedgerWriteFailed(f"the database refuses writes: {_cause(exc)}") from exc
        if self._failure is failure:
            self._failure = None

    def _note(self, outcomes: Iterable[object]) -> None:
        """Remember why writes fail (readiness), forget it once one succeeds. A conflict (a
        key or version stored first) or a lock timeout is the request's lot, not a refusal."""
        for outcome in outcomes:
            if not isinstance(outcome, BaseException):
                self._failure = None
                return
            if _refused(outcome):
                self._failure = (self._clock.monotonic(), _cause(outcome))

    def submit(self, write: DecisionWrite) -> Future[Position]:
        """Hand a decision over (from a thread); the future resolves once it is committed."""
        future: Future[Position] = Future()
        if not self.running:
            future.set_exception(_not_running())
            return future
        self._queue.put(Pending(write, future))
        return future

    async def append(self, write: DecisionWrite) -> Position:
        """Hand a decision over from the event loop and wait until it is committed."""
        if not self.running:
            raise _not_running()
        future: asyncio.Future[Position] = asyncio.get_running_loop().create_future()
        self._queue.put(Pending(write, future))
        return await future

    def write(self, batch: Batch) -> Applied:
        """Apply a batch now, in one transaction of its own, and wait; its events are
        published when this returns. Here: in the caller's thread (the head lock orders it
        with the writer thread's groups)."""
        try:
            applied = apply_alone(self._sessions, batch, self._clock.now(), self._edge)
        except Exception as exc:
            self._note([exc])
            raise
        self._note([applied])
        self._events.publish(applied.events)
        return applied

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is None:
                break
            group = [first]
            while len(group) < self._max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stopping = True
                    break
                group.append(item)
            self._commit(group)

    def _commit(self, group: list[Pending]) -> None:
        """Commit the group and answer every request of it, whatever fails on the way."""
        writes = [pending.write for pending in group]
        try:
            outcomes, events = commit_group(self._sessions, writes, self._clock.now(), self._edge)
        except Exception as exc:  # commit_group's own handling failed: answer all the same
            failed = LedgerWriteFailed(f"the ledger could not record the write: {_cause(exc)}")
            outcomes, events = [failed] * len(group), []
        with contextlib.suppress(Exception):  # committed: the handlers' failures are theirs
            self._events.publish(events)
        self._note(outcomes)
        settle(zip(group, outcomes, strict=True))


def _not_running() -> LedgerWriteFailed:
    return LedgerWriteFailed("the ledger's writer is not running")
