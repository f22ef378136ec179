"""Durable decisions: one writer thread appends them to the verifiable log in group commits.

Requests (and sweeps) hand a `Record` to the recorder and wait for its future. The writer
takes everything queued (up to MAX_BATCH), and in ONE transaction locks the log's head,
appends a `decision` entry per decision (supportgate/ledger/log.py: leaves and tree nodes),
the decision rows with their `leaf_index`, the rules they name, the tracked-manifest upserts
and the idempotency responses, moves the head and commits. The
future resolves only after the commit, so a 201 always means the decision is durable; a
database failure fails every future of the batch (the API answers 503). Batching is what
lets many concurrent requests share one lock and one commit.

If the batch hits a uniqueness conflict (an Idempotency-Key that another process stored
first), the batch is rolled back and its records are written one transaction each, so only
the conflicting record fails, with IdempotencyConflict.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import msgspec
from sqlalchemy import Table, func, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.alerts.services import record_verdict_changes
from supportgate.db import Decision as DecisionRow
from supportgate.db import DecisionRule, IdempotencyKey, Manifest, transaction
from supportgate.db.bulk import append_rows
from supportgate.evaluations.evaluator import Evaluation
from supportgate.ledger.entries import decision_entry
from supportgate.ledger.log import append_entries, lock_head
from supportgate.logging import get_logger
from supportgate.manifests.decision import Decision

MAX_BATCH = 256
log = get_logger(__name__)

_decisions: Table = DecisionRow.__table__  # type: ignore[attr-defined]
_rules: Table = DecisionRule.__table__  # type: ignore[attr-defined]
_manifests: Table = Manifest.__table__  # type: ignore[attr-defined]
_idempotency: Table = IdempotencyKey.__table__  # type: ignore[attr-defined]


class BatchHooks(Protocol):
    """What a batch appended with `DecisionRecorder.write` does besides appending, in the same
    transaction (a sweep's batch: supportgate.reevaluation.runner.SweepBatchWrite). The decision
    writer process runs them too, so they are data: a msgspec Struct the writer can decode."""

    def admit(self, session: Session, records: Sequence[Record]) -> Sequence[Record]:
        """Under the log's head lock, before the append: the records still to append."""

    def finish(self, session: Session, appended: Sequence[Record]) -> None:
        """After the append."""


class IdempotencyConflict(Exception):
    """The Idempotency-Key already holds a stored response (another request stored it first)."""


@dataclass(frozen=True, slots=True)
class Tracking:
    """The manifest content to track under (kind, name) with this decision."""

    content: dict[str, Any]
    content_digest: str
    owner: str | None
    hardware_ref: str | None


@dataclass(frozen=True, slots=True)
class IdempotentResponse:
    """The response to store for an Idempotency-Key, in the decision's transaction."""

    api_key_id: int
    key: str
    request_digest: str
    status_code: int
    body: bytes


@dataclass(frozen=True, slots=True)
class Record:
    evaluation: Evaluation
    tracking: Tracking | None = None
    idempotency: IdempotentResponse | None = None


@dataclass(slots=True)
class _Pending:
    record: Record
    future: Future[None] | asyncio.Future[None]
    """A thread's (`submit`) or the event loop's (`append`)."""


def settle(outcomes: Iterable[tuple[_Pending, BaseException | None]]) -> None:
    """Resolve handed-over records' futures (None: written) from any thread. The event loop's
    futures are resolved in the loop, one callback per loop for all of them: a group commit
    wakes the loop once, not once per request."""
    in_loops: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[None], Any]]] = {}
    for pending, failure in outcomes:
        future = pending.future
        if isinstance(future, asyncio.Future):
            in_loops.setdefault(future.get_loop(), []).append((future, failure))
        elif not future.done():
            _resolve(future, failure)
    for loop, futures in in_loops.items():
        try:
            loop.call_soon_threadsafe(_resolve_all, futures)
        except RuntimeError:  # the loop has closed: nobody waits any more
            continue


def _resolve_all(futures: list[tuple[asyncio.Future[None], BaseException | None]]) -> None:
    for future, failure in futures:
        if not future.done():  # a request cancelled meanwhile (its client went away)
            _resolve(future, failure)


def _resolve(future: Future[None] | asyncio.Future[None], failure: BaseException | None) -> None:
    if failure is None:
        future.set_result(None)
    else:
        future.set_exception(failure)


class DecisionRecorder:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        max_batch: int = MAX_BATCH,
        on_recorded: Callable[[Decision], None] = lambda _decision: None,
    ) -> None:
        self._sessions = sessions
        self._max_batch = max_batch
        self._on_recorded = on_recorded
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="decision-writer", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Write what is queued, then end the writer."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def submit(self, record: Record) -> Future[None]:
        """Hand a record over (from a thread); the future resolves once it is committed."""
        future: Future[None] = Future()
        if self._thread is None:
            future.set_exception(_not_running())
            return future
        self._queue.put(_Pending(record, future))
        return future

    async def append(self, record: Record) -> None:
        """Hand a record over from the event loop and wait until it is committed."""
        if self._thread is None:
            raise _not_running()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put(_Pending(record, future))
        await future

    def write(
        self, records: Sequence[Record], *, hooks: BatchHooks | None = None
    ) -> Sequence[Record]:
        """Append records now, in one transaction of their own, and wait (for sweeps).

        `hooks.admit` runs first under the log's head lock (so no other writer moves a tracked
        manifest meanwhile) and returns the records still to append; `hooks.finish` runs after
        the append, in the same transaction (a sweep moves its cursor there). Returns the
        records appended. Here: in the caller's thread."""
        appended = append_records(self._sessions, records, hooks=hooks)
        self._recorded(appended)
        return appended

    def _recorded(self, records: Sequence[Record]) -> None:
        for record in records:
            self._on_recorded(record.evaluation.decision)

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is None:
                break
            batch = [first]
            while len(batch) < self._max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stopping = True
                    break
                batch.append(item)
            self._write_batch(batch)

    def _write_batch(self, batch: list[_Pending]) -> None:
        failures = write_group(self._sessions, [pending.record for pending in batch])
        outcomes = list(zip(batch, failures, strict=True))
        self._recorded([pending.record for pending, failure in outcomes if failure is None])
        settle(outcomes)


def _not_running() -> RuntimeError:
    return RuntimeError("the decision recorder is not running")


def write_group(
    sessions: sessionmaker[Session], records: Sequence[Record]
) -> list[Exception | None]:
    """Append records in one transaction; per record, None (appended) or why not.

    A uniqueness conflict (an Idempotency-Key another process stored first) rolls the group
    back and writes each record alone, so only the conflicting one fails, with
    IdempotencyConflict; any other failure fails them all (the API answers 503)."""
    try:
        append_records(sessions, records)
    except IntegrityError:
        return [_write_alone(sessions, record) for record in records]
    except Exception as exc:  # every waiting request must hear of it
        log.exception("decisions_not_recorded", count=len(records))
        return [exc] * len(records)
    return [None] * len(records)


def _write_alone(sessions: sessionmaker[Session], record: Record) -> Exception | None:
    try:
        append_records(sessions, [record])
    except IntegrityError as exc:
        return IdempotencyConflict(str(exc.orig))
    except Exception as exc:  # the waiting request must hear of it
        return exc
    return None


def append_records(
    sessions: sessionmaker[Session], records: Sequence[Record], *, hooks: BatchHooks | None = None
) -> Sequence[Record]:
    """Append records in one transaction (with the batch's hooks); the records appended."""
    now = datetime.now(UTC)
    with transaction(sessions, write=True) as session:
        head = lock_head(session)
        if hooks is not None:
            records = hooks.admit(session, records)
        first_leaf = head.size
        append_entries(
            session,
            head,
            [decision_entry(r.evaluation.decision, recorded_at=now) for r in records],
        )
        seq = _last_seq(session)
        decision_rows: list[dict[str, Any]] = []
        rule_rows: list[dict[str, Any]] = []
        manifest_rows: dict[tuple[str, str], dict[str, Any]] = {}
        idempotency_rows: list[dict[str, Any]] = []
        for offset, record in enumerate(records):
            seq += 1
            decision_rows.append(_decision_row(record.evaluation, seq, first_leaf + offset, now))
            decision = record.evaluation.decision
            rule_rows.extend(
                {"decision_seq": seq, "rule": rule, "severity": severity}
                for rule, severity in sorted({(v.rule, v.severity) for v in decision.violations})
            )
            if record.tracking is not None:
                key = (decision.manifest.kind, decision.manifest.name)
                manifest_rows[key] = _manifest_row(record, now)
            if record.idempotency is not None:
                idempotency_rows.append(_idempotency_row(record.idempotency, now))
        append_rows(session, _decisions, decision_rows)
        append_rows(session, _rules, rule_rows)
        if records:  # before the tracked verdicts move: an alert needs the verdict before
            record_verdict_changes(session, [r.evaluation.decision for r in records], now)
        if manifest_rows:
            session.execute(_upsert_manifests(session), list(manifest_rows.values()))
        if idempotency_rows:
            session.execute(insert(_idempotency), idempotency_rows)
        if hooks is not None:
            hooks.finish(session, records)
    return records


def _last_seq(session: Session) -> int:
    """The last decision's seq (under the head lock no other writer appends meanwhile)."""
    return int(session.execute(select(func.max(_decisions.c.seq))).scalar_one() or 0)


def _decision_row(
    evaluation: Evaluation, seq: int, leaf_index: int, now: datetime
) -> dict[str, Any]:
    decision = evaluation.decision
    document = msgspec.to_builtins(
        {
            "violations": decision.violations,
            "claims": decision.claims,
            "checklist": decision.checklist,
            "recommendations": decision.recommendations,
        }
    )
    return {
        "seq": seq,
        "id": decision.id,
        "kind": decision.manifest.kind,
        "name": decision.manifest.name,
        "verdict": decision.verdict,
        "allowed": decision.allowed,
        "cause": decision.cause,
        "matrix_version": decision.matrix_version,
        "policy_revision": decision.policy_revision,
        "input_digest": decision.input_digest,
        "evaluated_at": decision.evaluated_at,
        "document": document,
        "recorded_at": now,
        "policy_input": evaluation.policy_input.canonical.decode(),
        "leaf_index": leaf_index,
    }


def _manifest_row(record: Record, now: datetime) -> dict[str, Any]:
    decision = record.evaluation.decision
    tracking = record.tracking
    assert tracking is not None  # noqa: S101 - only called for records that track
    return {
        "kind": decision.manifest.kind,
        "name": decision.manifest.name,
        "owner": tracking.owner,
        "content": tracking.content,
        "content_digest": tracking.content_digest,
        "hardware_ref": tracking.hardware_ref,
        "latest_decision_id": decision.id,
        "latest_verdict": decision.verdict,
        "created_at": now,
        "updated_at": now,
        "last_evaluated_at": decision.evaluated_at,
    }


def _idempotency_row(response: IdempotentResponse, now: datetime) -> dict[str, Any]:
    return {
        "api_key_id": response.api_key_id,
        "key": response.key,
        "request_digest": response.request_digest,
        "status_code": response.status_code,
        "response_body": response.body,
        "created_at": now,
    }


_MANIFEST_COLUMNS = (
    "owner",
    "content",
    "content_digest",
    "hardware_ref",
    "latest_decision_id",
    "latest_verdict",
    "updated_at",
    "last_evaluated_at",
)


def _upsert_manifests(session: Session) -> Any:
    """INSERT ... ON CONFLICT (kind, name) DO UPDATE, run once per batch with many rows (an
    executemany: compiled once and cached, unlike a multi-VALUES statement of varying size)."""
    dialect = session.get_bind().dialect.name
    dialect_insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = dialect_insert(_manifests)
    return statement.on_conflict_do_update(
        index_elements=["kind", "name"],
        set_={column: statement.excluded[column] for column in _MANIFEST_COLUMNS},
    )
