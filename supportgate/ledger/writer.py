"""The ledger's one writer: a thread that applies every Batch (write.apply_batch).

Queued batches of decisions only (the API's submissions) are committed together as ONE
transaction: one head lock, one commit, however many requests wait; any other batch alone, in
its turn. A future resolves only after the commit and its events are published, so a 201
means the decision is durable. A group that hits a uniqueness conflict (an Idempotency-Key
another process stored first) is applied again one batch at a time, so only that one fails.
Failures and readiness: docs/ledger.md, "When the write fails".
"""

from __future__ import annotations

import contextlib
import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import transaction
from supportgate.db.engine import busy_error
from supportgate.errors import DatabaseBusy, DatabaseError, SupportgateError
from supportgate.events import Events
from supportgate.logging import get_logger

from .batches import Applied, Batch
from .log import touch_head
from .write import apply_batch

MAX_BATCH = 256
FAILURE_HOLD_S = 30.0
"""After a failed write, how long readiness says so unless a write succeeds (check_ready)."""
log = get_logger(__name__)


class IdempotencyConflict(SupportgateError):
    """The Idempotency-Key already holds a stored response (another request stored it first)."""


class LedgerWriteFailed(DatabaseError):
    """A write failed for another reason than a driver's error (a full disk, a bug), or the
    writer is not running (HTTP 503)."""


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


def apply_alone(sessions: sessionmaker[Session], batch: Batch, now: datetime) -> Applied:
    try:
        with transaction(sessions, write=True) as session:
            return apply_batch(session, batch, now)
    except (SupportgateError, DBAPIError):
        raise
    except Exception as exc:  # whatever it is, the writer's callers hear of it as a 503
        raise LedgerWriteFailed(f"the ledger could not record the write: {_cause(exc)}") from exc


Outcome = Applied | Exception


def commit_group(
    sessions: sessionmaker[Session], batches: list[Batch], now: datetime
) -> list[Outcome]:
    """Batches of decisions alone, as one transaction (the module docstring: a conflict)."""
    try:
        merged = [write for batch in batches for write in batch.decisions]
        applied = apply_alone(sessions, Batch(decisions=merged), now)
    except IntegrityError:
        return [_alone(sessions, batch, now) for batch in batches]
    outcomes: list[Outcome] = []
    placed = iter(applied.decisions)
    for index, batch in enumerate(batches):
        positions = [next(placed) for _ in batch.decisions]
        events = applied.events if index == 0 else []  # published once, by the writer
        outcomes.append(
            Applied(decisions=positions, conflicts=[], events=events, bodies=applied.bodies)
        )
    return outcomes


def _alone(sessions: sessionmaker[Session], batch: Batch, now: datetime) -> Outcome:
    try:
        return apply_alone(sessions, batch, now)
    except IntegrityError as exc:  # of decisions alone: a key another process stored first
        return IdempotencyConflict(str(exc.orig)) if _decisions_only(batch) else exc
    except Exception as exc:  # its submitter must hear of it
        return exc


@dataclass(slots=True)
class _Pending:
    batch: Batch
    future: Future[Applied]


class LedgerWriter:
    def __init__(
        self, sessions: sessionmaker[Session], *, events: Events, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        """`clock`: what time the batches are recorded at (recorded_at, alerts, outbox)."""
        self._sessions = sessions
        self._events = events
        self._clock = clock
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._starting = threading.Lock()
        self._failure: tuple[float, str] | None = None
        """When (monotonic) and why the last write failed, until one succeeds."""

    def start(self) -> None:
        with self._starting:
            self._stopped = False
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ledger-writer", daemon=True)
                self._thread.start()

    def stop(self) -> None:
        """Write what is queued, then end the writer; it refuses writes until started again."""
        with self._starting:
            self._stopped = True
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def check_ready(self) -> None:
        """Not ready for FAILURE_HOLD_S after a failed write, then until log.touch_head is taken
        (docs/ledger.md, "When the write fails")."""
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

    def submit(self, batch: Batch) -> Future[Applied]:
        future: Future[Applied] = Future()
        if self._thread is None and not self._stopped:
            self.start()
        if self._stopped or threading.current_thread() is self._thread:
            # stopped; or an event handler of this thread, which would wait for itself
            future.set_exception(_not_running())
            return future
        self._queue.put(_Pending(batch, future))
        return future

    def write(self, batch: Batch) -> Applied:
        return self.submit(batch).result()

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is None:
                break
            taken = [first]
            while len(taken) < MAX_BATCH:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stopping = True
                    break
                taken.append(item)
            self._apply(taken)

    def _apply(self, taken: list[_Pending]) -> None:
        group: list[_Pending] = []
        for pending in taken:
            if _decisions_only(pending.batch):
                group.append(pending)
                continue
            if group:
                self._commit(group)
                group = []
            self._commit([pending])
        if group:
            self._commit(group)

    def _commit(self, group: list[_Pending]) -> None:
        """Commit the group and answer every submitter of it, whatever fails on the way."""
        batches = [pending.batch for pending in group]
        now = self._clock.now()
        try:
            if len(group) > 1:
                outcomes = commit_group(self._sessions, batches, now)
            else:
                outcomes = [_alone(self._sessions, batches[0], now)]
        except Exception as exc:  # every submitter must hear of it
            outcomes = [exc] * len(group)
        failed = [o for o in outcomes if isinstance(o, Exception)]
        with contextlib.suppress(Exception):  # committed or not: the log's failures are its own
            if failed:
                log.error("batches_not_recorded", count=len(failed), cause=_cause(failed[0]))
            for outcome in outcomes:
                if isinstance(outcome, Applied):
                    self._events.publish(outcome.events)
        self._note(outcomes)
        for pending, outcome in zip(group, outcomes, strict=True):
            if isinstance(outcome, Exception):
                pending.future.set_exception(outcome)
            else:
                pending.future.set_result(outcome)

    def _note(self, outcomes: list[Outcome]) -> None:
        """Remember why writes fail (readiness), forget it once one succeeds. A conflict (a
        key or version stored first) or a lock timeout is the request's lot, not a refusal."""
        for outcome in outcomes:
            if not isinstance(outcome, Exception):
                self._failure = None
                return
            if _refused(outcome):
                self._failure = (self._clock.monotonic(), _cause(outcome))


def _decisions_only(batch: Batch) -> bool:
    return not (
        batch.matrices
        or batch.waivers_created
        or batch.waivers_deleted
        or batch.untracked
        or batch.sweep
    )


def _not_running() -> LedgerWriteFailed:
    return LedgerWriteFailed("the ledger's writer is not running")
