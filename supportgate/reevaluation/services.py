"""Re-evaluation sweeps: one at a time per database, each resumed from its cursor and judged
under the matrix pinned when it starts (docs/reevaluation.md)."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, wait
from typing import Any
from uuid import uuid4

import msgspec
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import Sweep, transaction
from supportgate.db.locks import advisory_lock
from supportgate.errors import DatabaseError, PolicyEngineError
from supportgate.evaluations.evaluator import Evaluator
from supportgate.events import Events, HardwareRecorded, MatrixPublished, SweepEnded, WaiverChanged
from supportgate.ledger import sweeps as sweep_rows
from supportgate.ledger.batches import Applied
from supportgate.ledger.writer import LedgerWriter
from supportgate.logging import get_logger
from supportgate.manifests.decision import Cause
from supportgate.matrix.services import MatrixService
from supportgate.policy import PolicyBundle, PolicyEngine
from supportgate.policy.time_thresholds import organisation_reads_the_time
from supportgate.threads import in_thread, thread_twin

from . import repository
from .runner import BatchSweeper
from .source import (
    SWEEP_BATCH_SIZE,
    Key,
    WaiversFor,
    iter_tracked_batches,
    keys_referencing,
)
from .views import SweepRequest, SweepView

log = get_logger(__name__)

POLL_SECONDS = 10.0  # how often to look for sweeps to resume (a dead replica's)
HARDWARE_GATHER_SECONDS = 0.1
WAIT_SECONDS = 0.5
# Held for the whole sweep, so a replica killed mid-sweep frees it at once.
SWEEP_LOCK_KEY = 0x5347_5357  # "SGSW"


class SweepPaused(DatabaseError):
    """It resumes later, from its cursor."""


class ReevaluationService:
    def __init__(
        self,
        *,
        sessions: sessionmaker[Session],
        db: Engine,
        engine: PolicyEngine,
        matrices: MatrixService,
        ledger: LedgerWriter,
        waivers_for: WaiversFor,
        events: Events,
        policies: Callable[[], PolicyBundle],
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        """`policies`: those in force (the memo is off under an organisation rule that reads
        the time). `clock`: the time sweeps judge at (waiting for other threads and processes
        is on real time)."""
        self._policies = policies
        self._clock = clock
        self._sessions = sessions
        self._db = db
        self._engine = engine
        self._matrices = matrices
        self._ledger = ledger
        self._waivers_for = waivers_for
        self._events = events
        self.batch_size = SWEEP_BATCH_SIZE  # bench/bench_sweep.py --batch sets another
        self.use_memos = True  # the sweep memo, a speed device; off: its plain path (tests, bench)
        self._wake = threading.Event()
        self._drain_due = True  # look for unfinished sweeps (at start, on request, each poll)
        self._stopping = threading.Event()
        self._hardware: queue.SimpleQueue[HardwareRecorded] = queue.SimpleQueue()
        self._hardware_pending = 0  # pool changes taken in but whose sweep is not queued yet
        self._hardware_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._seen_matrix: str | None = None

    def start_sweep(
        self, cause: Cause, *, trigger: str, only: Sequence[tuple[str, str]] | None = None
    ) -> str:
        sweep_id = self._request(cause, trigger=trigger, only=only)
        self.wake()
        return sweep_id

    def run_sweep(self, cause: Cause, *, trigger: str) -> SweepView:
        sweep_id = self._request(cause, trigger=trigger, only=None)
        while True:
            outcome = self.drain()
            view = self.view(sweep_id)
            assert view is not None  # noqa: S101 - the row was inserted above
            if view.status in ("finished", "failed"):
                return view
            if outcome == "paused":
                raise SweepPaused(
                    f"sweep {sweep_id} paused (it resumes later from where it stopped): "
                    f"{view.error}"
                )
            time.sleep(WAIT_SECONDS)  # another process holds the sweep lock

    @in_thread
    def request_now(self, body: SweepRequest | None) -> SweepView:
        only = None
        if body is not None and body.manifests is not None:
            only = [(m.kind, m.name) for m in body.manifests]
        sweep_id = self.start_sweep("schedule", trigger=f"request:{uuid4()}", only=only)
        view = self.view(sweep_id)
        assert view is not None  # noqa: S101 - just inserted
        return view

    def hardware_recorded(self, recorded: HardwareRecorded) -> None:
        # The lookup runs in the worker, so that the writer does not wait.
        with self._hardware_lock:
            self._hardware_pending += 1
        self._hardware.put(recorded)
        self._wake.set()

    def waiver_changed(self, change: WaiverChanged) -> None:
        if change.affects_tracked:
            self.start_sweep("waiver", trigger=change.trigger, only=[(change.kind, change.name)])

    def matrix_published(self, published: MatrixPublished) -> None:
        """A future version is scheduled instead. The first version ever published judges
        nothing anew: nothing can have been judged before a matrix existed."""
        versions = self._matrices.versions(reload=True)
        if len(versions) > 1 and self._matrices.current().version == published.version:
            self.start_sweep("matrix", trigger=matrix_trigger(published.version))

    def check_matrix(self) -> None:
        """At startup, also sweep where tracked manifests were judged under other policies."""
        current = self._matrices.current()
        if current.version == self._seen_matrix:
            return
        first_look = self._seen_matrix is None
        self._seen_matrix = current.version
        if not first_look:
            self.start_sweep("matrix", trigger=matrix_trigger(current.version))
            return
        revision = self._engine.policy_revision
        with transaction(self._sessions) as session:
            other_matrix, other_policy = repository.judged_elsewhere(
                session, matrix_version=current.version, policy_revision=revision
            )
        if other_matrix:
            self.start_sweep("matrix", trigger=matrix_trigger(current.version))
        elif other_policy:
            self.policies_changed()

    def policies_changed(self) -> None:
        """Only a process on the new policies may run their sweep."""
        revision = self._engine.policy_revision
        with transaction(self._sessions) as session:
            last = repository.latest_finished(session)
        trigger = f"policy:{revision}:after:{last.id if last is not None else 'none'}"
        self._request("policy", trigger=trigger, only=None, policy_revision=revision)
        self.wake()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Also waits for pool changes not yet queued as sweeps."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            # Pending first: the worker counts a pool change off only after its sweep's row is
            # committed, so a count of 0 means every such row is already there for the query
            # below. The other order missed a sweep queued between the two looks.
            with self._hardware_lock:
                pending = self._hardware_pending
            with transaction(self._sessions) as session:
                busy = repository.next_unfinished(session, self._engine.policy_revision) is not None
            if not busy and not pending:
                return True
            time.sleep(0.02)
        return False

    def latest_trigger(self, prefix: str) -> str | None:
        with transaction(self._sessions) as session:
            return repository.latest_trigger(session, prefix)

    def view(self, sweep_id: str) -> SweepView | None:
        with transaction(self._sessions) as session:
            row = repository.sweep(session, sweep_id)
            return None if row is None else _view(row)

    view_in_thread = thread_twin(view)

    def start(self) -> None:
        if self._thread is None:
            self._stopping.clear()
            self._thread = threading.Thread(target=self._work, name="sweeper", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stopping.set()
            self._wake.set()
            self._thread.join()
            self._thread = None

    def wake(self) -> None:
        self._drain_due = True
        self._wake.set()

    def drain(self) -> str:
        """`done`, `busy` (another process holds the lock) or `paused` (the engine or the
        database failed; the sweep is retried)."""
        with advisory_lock(self._db, SWEEP_LOCK_KEY) as held:
            if not held:
                return "busy"
            while not self._stopping.is_set():
                with transaction(self._sessions) as session:
                    sweep_id = repository.next_unfinished(session, self._engine.policy_revision)
                if sweep_id is None:
                    return "done"
                if not self._run(sweep_id):
                    return "paused"
            return "paused"

    def _work(self) -> None:
        while not self._stopping.is_set():
            try:
                if self._take_hardware():
                    self._drain_due = True
                if self._drain_due:
                    self._drain_due = False
                    self.drain()
            except Exception:  # the worker must outlive a bad moment (the database away)
                log.exception("sweeper_error")
            if not self._wake.wait(POLL_SECONDS):
                self._drain_due = True  # another process may have queued one
            self._wake.clear()
            if not self._drain_due and not self._stopping.is_set():
                # Only pools changed: let a burst of them (CI posting many) gather, so one
                # lookup serves them all, instead of a query per submission.
                self._stopping.wait(HARDWARE_GATHER_SECONDS)

    def _take_hardware(self) -> bool:
        """One lookup for all pool changes taken in, one sweep per pool."""
        latest: dict[str, HardwareRecorded] = {}
        taken = 0
        while True:
            try:
                recorded = self._hardware.get_nowait()
            except queue.Empty:
                break
            latest[recorded.name] = recorded
            taken += 1
        try:
            judged = {name: recorded.evaluated_at for name, recorded in latest.items()}
            referencing = keys_referencing(self._sessions, judged) if latest else {}
            for name, keys in referencing.items():
                trigger = f"hardware:{name}:{latest[name].decision_id}"
                self._request("hardware", trigger=trigger, only=keys)
        finally:
            with self._hardware_lock:
                self._hardware_pending -= taken
        return bool(referencing)

    def _request(
        self,
        cause: Cause,
        *,
        trigger: str,
        only: Sequence[tuple[str, str]] | None,
        policy_revision: str | None = None,
    ) -> str:
        """`policy_revision`: only a process on these policies may run it."""
        values: dict[str, Any] = {
            "id": str(uuid4()),
            "trigger": trigger,
            "cause": cause,
            "status": "queued",
            "only": None if only is None else [list(key) for key in only],
            "evaluated": 0,
            "changed": 0,
            "failed": 0,
            "requested_at": self._clock.now(),
            "policy_revision": policy_revision,
        }
        with transaction(self._sessions, write=True) as session:
            return sweep_rows.insert_sweep(session, values)

    def _run(self, sweep_id: str) -> bool:
        """False when the engine or the database is unavailable (it is retried)."""
        started = self._clock.monotonic()
        sweep = self._begin(sweep_id)
        if sweep is None:
            return True
        matrix = self._matrices.get(sweep.matrix_version or "") or self._matrices.current()
        use_memos = self.use_memos
        if use_memos and organisation_reads_the_time(self._policies()):
            log.info("sweep_memo_off", sweep_id=sweep.id, reason="organisation_rule_reads_time")
            use_memos = False
        sweeper = BatchSweeper(
            sweep_id=sweep.id,
            cause=sweep.cause,  # type: ignore[arg-type]  # a checked column
            evaluator=Evaluator(self._engine, matrix.loaded),
            sessions=self._sessions,
            waivers_for=self._waivers_for,
            clock=self._clock,
            use_memos=use_memos,
        )
        after: Key | None = None
        if sweep.cursor_kind is not None and sweep.cursor_name is not None:
            after = (sweep.cursor_kind, sweep.cursor_name)
        only = None if sweep.only is None else [(k, n) for k, n in sweep.only]
        try:
            skipped = self._sweep(sweeper, only=only, after=after)
            if skipped is None:
                return False
        except (PolicyEngineError, DBAPIError, DatabaseError) as exc:
            log.warning("sweep_paused", sweep_id=sweep_id, error=str(exc).splitlines()[0])
            self._set(sweep_id, error=str(exc)[:2000])
            return False
        except Exception as exc:
            log.exception("sweep_failed", sweep_id=sweep_id)
            failed_at = self._clock.now()
            self._set(sweep_id, status="failed", error=repr(exc)[:2000], finished_at=failed_at)
            self._events.publish([SweepEnded(sweep_id=sweep_id, status="failed")])
            return True
        self._set(sweep_id, status="finished", finished_at=self._clock.now(), error=None)
        self._events.publish([SweepEnded(sweep_id=sweep_id, status="finished")])
        view = self.view(sweep_id)
        if view is not None:
            log.info(
                "sweep_finished",
                sweep_id=sweep_id,
                cause=view.cause,
                trigger=view.trigger,
                matrix_version=view.matrix_version,
                **msgspec.structs.asdict(view.counts),
                unchanged_by_memo=skipped,
                run_seconds=round(self._clock.monotonic() - started, 3),
            )
        return True

    def _sweep(
        self, sweeper: BatchSweeper, *, only: list[Key] | None, after: Key | None
    ) -> int | None:
        """The count the memo knew unchanged; None when stopped part way."""
        skipped = 0
        judged = (sweeper.evaluator.matrix.version, sweeper.evaluator.engine.policy_revision)
        batches = iter_tracked_batches(
            self._sessions, batch_size=self.batch_size, only=only, after=after, judged=judged
        )
        # One write outstanding while the next batch is judged: the evaluation process
        # (engine_process.py) evaluates while this process's writer commits (docs/performance.md).
        # A write that fails stops the sweep before the next is submitted: its cursor stays.
        writing: Future[Applied] | None = None
        stopped = False
        try:
            for batch in batches:
                write, held = sweeper.judge(batch)
                if writing is not None:
                    writing.result()
                writing = self._ledger.submit(write)
                skipped += held
                if self._stopping.is_set():
                    stopped = True
                    break
        finally:  # a batch that failed to be judged: the write before it still ends first
            if writing is not None:
                wait([writing])
        if writing is not None:
            writing.result()
        return None if stopped else skipped

    def _begin(self, sweep_id: str) -> Sweep | None:
        with transaction(self._sessions, write=True) as session:
            sweep = repository.sweep(session, sweep_id, lock=True)
            if sweep is None or sweep.status not in repository.UNFINISHED:
                return None
            if sweep.status == "queued":
                self._matrices.versions(reload=True)  # another replica may have just published
                values = {
                    "status": "running",
                    "started_at": self._clock.now(),
                    "matrix_version": self._matrices.current().version,
                    "policy_revision": self._engine.policy_revision,
                }
                sweep_rows.update_sweep(session, sweep_id, **values)
                sweep = repository.sweep(session, sweep_id)
                log.info("sweep_started", sweep_id=sweep_id, **values)
            assert sweep is not None  # noqa: S101 - locked above
            session.expunge(sweep)
            return sweep

    def _set(self, sweep_id: str, **values: Any) -> None:
        with transaction(self._sessions, write=True) as session:
            sweep_rows.update_sweep(session, sweep_id, **values)


def matrix_trigger(version: str) -> str:
    return f"matrix:{version}"


def _view(row: Sweep) -> SweepView:
    duration = None
    if row.started_at is not None and row.finished_at is not None:
        duration = round((row.finished_at - row.started_at).total_seconds(), 3)
    counts = {"evaluated": row.evaluated, "changed": row.changed, "failed": row.failed}
    values = {**row.model_dump(), "counts": counts, "duration_seconds": duration}
    return msgspec.convert(values, SweepView)
