"""The one write of the ledger: `apply_batch` applies a Batch in the caller's transaction.

Every write that can change a verdict goes through here, in the writer thread or the writer
process (writer.py, writer_process.py), on SQLite and PostgreSQL alike. Read it top-down:

    1. lock the log's head (the next writer, in any thread, process or replica, waits)
    2. admit: a sweep's decision whose manifest moved since the sweep read it is dropped
    3. append the entries to the log
    4. insert the decisions and the rules they name
    5. alerts: a verdict change against the tracked verdict is an alert
    6. the webhook outbox: a delivery per alert and active subscription
    7. move the tracked manifests (submissions track their content; sweeps move the latest
       decision and stamp the unchanged)
    8. store the Idempotency-Key answers
    9. the sweep's progress: memos, cursor and counts

and return what happened as plain data (Applied), events included; the caller publishes
them once the transaction has committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import Table, func, insert, select
from sqlmodel import Session

from supportgate.alerts.services import record_alerts
from supportgate.db import Decision as DecisionRow
from supportgate.db import DecisionRule, IdempotencyKey
from supportgate.db.bulk import append_rows
from supportgate.events import DeliveriesEnqueued, Event, HardwareRecorded, decisions_recorded
from supportgate.webhooks.outbox import enqueue_alert_deliveries

from . import sweeps, tracking
from .batches import Applied, Batch, DecisionWrite, IdempotentAnswer
from .entries import decision_entry
from .log import Head, append_entries, lock_head

_decisions: Table = DecisionRow.__table__  # type: ignore[attr-defined]
_rules: Table = DecisionRule.__table__  # type: ignore[attr-defined]
_idempotency: Table = IdempotencyKey.__table__  # type: ignore[attr-defined]


def apply_batch(session: Session, batch: Batch, now: datetime) -> Applied:
    """Apply `batch` in `session`'s transaction (open it with `transaction(..., write=True)`);
    `now` is its recorded_at."""
    head = lock_head(session)
    chosen = _admit(session, batch.decisions)
    admitted = [batch.decisions[index] for index in chosen]
    positions = _append_decisions(session, head, admitted, now)
    decisions = [write.decision for write in admitted]

    alerts = record_alerts(session, decisions, now)
    delivered = enqueue_alert_deliveries(session, alerts, now)

    tracking.track(session, admitted, now)
    tracking.move_latest(session, [w.decision for w in admitted if w.expected is not None])
    _store_answers(session, [w.idempotency for w in admitted if w.idempotency is not None], now)
    if batch.sweep is not None:
        dropped = {write.key for write in batch.decisions} - {write.key for write in admitted}
        tracking.stamp_evaluated(session, batch.sweep.unchanged, batch.sweep.touched_at)
        sweeps.save_memos(
            session, [m for m in batch.sweep.memos if (m.kind, m.name) not in dropped]
        )
        sweeps.advance(session, batch.sweep, changed=len(admitted))

    placed = dict(zip(chosen, positions, strict=True))
    return Applied(
        decisions=[placed.get(index) for index in range(len(batch.decisions))],
        events=_events(admitted, delivered),
    )


def _admit(session: Session, writes: Sequence[DecisionWrite]) -> list[int]:
    """The positions of the writes to append: all but a sweep's decisions whose tracked
    manifest no longer stands where the sweep read it (a submission or an untracking came in
    between)."""
    expected = [write.key for write in writes if write.expected is not None]
    heads = tracking.heads(session, expected) if expected else {}
    return [
        index
        for index, write in enumerate(writes)
        if write.expected is None or heads.get(write.key) == write.expected
    ]


def _append_decisions(
    session: Session, head: Head, writes: Sequence[DecisionWrite], now: datetime
) -> list[int]:
    """Append a `decision` entry per decision to the log, then the decision rows (each with
    its entry's leaf_index) and the rules they name; their leaf indexes."""
    if not writes:
        return []
    append_entries(session, head, [decision_entry(w.decision, recorded_at=now) for w in writes])
    leaves = [head.size + offset for offset in range(len(writes))]
    seq = _last_seq(session)
    decision_rows: list[dict[str, Any]] = []
    rule_rows: list[dict[str, Any]] = []
    for write, leaf_index in zip(writes, leaves, strict=True):
        seq += 1
        decision_rows.append(_decision_row(write, seq, leaf_index, now))
        rule_rows.extend(
            {"decision_seq": seq, "rule": rule, "severity": severity}
            for rule, severity in sorted({(v.rule, v.severity) for v in write.decision.violations})
        )
    append_rows(session, _decisions, decision_rows)
    append_rows(session, _rules, rule_rows)
    return leaves


def _last_seq(session: Session) -> int:
    """The last decision's seq (under the head lock no other writer appends meanwhile)."""
    return int(session.execute(select(func.max(_decisions.c.seq))).scalar_one() or 0)


def _decision_row(write: DecisionWrite, seq: int, leaf_index: int, now: datetime) -> dict[str, Any]:
    decision = write.decision
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
        "policy_input": write.policy_input,
        "leaf_index": leaf_index,
    }


def _store_answers(session: Session, answers: Sequence[IdempotentAnswer], now: datetime) -> None:
    """A second answer for one (API key, Idempotency-Key) fails the primary key: the writer
    then writes the batch's decisions one by one, so that only that one fails."""
    if answers:
        session.execute(
            insert(_idempotency),
            [
                {
                    "api_key_id": answer.api_key_id,
                    "key": answer.key,
                    "request_digest": answer.request_digest,
                    "status_code": answer.status_code,
                    "response_body": answer.body,
                    "created_at": now,
                }
                for answer in answers
            ],
        )


def _events(admitted: Sequence[DecisionWrite], delivered: int) -> list[Event]:
    events: list[Event] = []
    if admitted:
        events.append(decisions_recorded((w.decision.verdict, w.decision.cause) for w in admitted))
    events.extend(
        HardwareRecorded(
            name=w.decision.manifest.name,
            decision_id=w.decision.id,
            evaluated_at=w.decision.evaluated_at,
        )
        for w in admitted
        if w.tracking is not None and w.decision.manifest.kind == "HardwareManifest"
    )
    if delivered:
        events.append(DeliveriesEnqueued(count=delivered))
    return events
