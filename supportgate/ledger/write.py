"""The one write of the ledger, under the log's head lock (the next writer, in any thread,
process or replica, waits). The parts the state does not allow are left out (Applied says
which): a sweep's decision whose manifest moved since the sweep read it, a submission whose key
may not take the tracked manifest from its owner, a version published already, a waiver
deleted already (or never created), a manifest not tracked. The rest go into the log in one
append, and the rows derived from them follow. Events return as data, for the caller to
publish once the transaction has committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import msgspec
from sqlmodel import Session

from supportgate.alerts.services import record_alerts
from supportgate.events import (
    DeliveriesEnqueued,
    Event,
    HardwareRecorded,
    MatrixPublished,
    WaiverChanged,
    decisions_recorded,
)
from supportgate.webhooks.outbox import enqueue_alert_deliveries

from . import decisions, matrices, sweeps, tracking, waivers
from .batches import (
    Applied,
    Batch,
    Conflict,
    DecisionWrite,
    Key,
    MatrixPublication,
    Untracking,
    WaiverDeletion,
)
from .entries import (
    Entry,
    decision_entry,
    matrix_entry,
    untracked_entry,
    waiver_created_entry,
    waiver_deleted_entry,
)
from .log import append_entries, lock_head


def apply_batch(session: Session, batch: Batch, now: datetime) -> Applied:
    """Apply `batch` in `session`'s transaction (open it with `transaction(..., write=True)`);
    `now` is its decisions' recorded_at."""
    head = lock_head(session)
    admitted = _admit(session, batch)

    parts = _entries(batch, admitted, now)
    append_entries(session, head, [entry for part in parts for entry in part])
    leaves = _leaves(head.size, parts)
    decisions.insert_decisions(session, admitted.decisions, leaves.decisions, now)

    appended = [write.decision for write in admitted.decisions]
    verdicts = {key: row.latest_verdict for key, row in admitted.tracked.rows.items()}
    alerts = record_alerts(session, appended, now, verdicts)
    delivered = enqueue_alert_deliveries(session, alerts, now)

    tracking.apply(
        session,
        [
            *(
                tracking.Change.decided(leaf, now, write.decision)
                for write, leaf in zip(admitted.decisions, leaves.decisions, strict=True)
            ),
            *(
                tracking.Change((u.kind, u.name), leaf, u.at)
                for u, leaf in zip(admitted.untracked, leaves.untracked, strict=True)
            ),
        ],
        {
            leaf: write.tracking
            for write, leaf in zip(admitted.decisions, leaves.decisions, strict=True)
            if write.tracking is not None
        },
        dict(admitted.tracked.spans),
    )
    answers = [
        (write.idempotency, write.decision.id, decisions.decision_body(write.decision, leaf))
        for write, leaf in zip(admitted.decisions, leaves.decisions, strict=True)
        if write.idempotency
    ]
    decisions.store_answers(session, [(answer, body) for answer, _, body in answers], now)

    matrices.insert_versions(
        session,
        [
            row
            for entry, leaf in zip(parts[1], leaves.matrices, strict=True)
            if (row := matrices.change_of(leaf, msgspec.json.decode(entry.body))) is not None
        ],
    )
    waivers.apply(
        session,
        [
            change
            for entry, leaf in zip(
                parts[2] + parts[3], leaves.waivers_created + leaves.waivers_deleted, strict=True
            )
            if (change := waivers.change_of(leaf, msgspec.json.decode(entry.body))) is not None
        ],
    )

    if batch.sweep is not None:
        dropped = {w.key for w in batch.decisions} - {w.key for w in admitted.decisions}
        tracking.stamp_evaluated(session, batch.sweep.unchanged, batch.sweep.touched_at)
        sweeps.save_memos(
            session, [m for m in batch.sweep.memos if (m.kind, m.name) not in dropped]
        )
        sweeps.advance(session, batch.sweep, changed=len(admitted.decisions))

    placed = dict(zip(admitted.decision_indexes, leaves.decisions, strict=True))
    return Applied(
        decisions=[placed.get(index) for index in range(len(batch.decisions))],
        conflicts=admitted.conflicts,
        events=[
            *_decision_events(admitted, delivered),
            *(MatrixPublished(version=m.version) for m in admitted.matrices),
            *_waiver_events(session, batch, admitted),
        ],
        bodies={decision_id: body for _, decision_id, body in answers},
    )


@dataclass(frozen=True, slots=True)
class _Admitted:
    decision_indexes: list[int]
    decisions: list[DecisionWrite]
    matrices: list[MatrixPublication]
    waivers_deleted: list[WaiverDeletion]
    deleted_waivers: dict[str, tuple[str, str, datetime]]
    """The waivers deleted: id -> (kind, name, expires_at)."""
    untracked: list[Untracking]
    conflicts: list[Conflict]
    tracked: tracking.Tracked
    """The batch's decisions' and untrackings' keys as they stood (tracking.tracked_of)."""


def _admit(session: Session, batch: Batch) -> _Admitted:
    """Under the head lock, nobody else writes: what is read here stays true until commit."""
    writes = batch.decisions
    tracked = tracking.tracked_of(
        session, list({*(w.key for w in writes), *((u.kind, u.name) for u in batch.untracked)})
    )
    heads = tracked.heads()
    indexes = _owners_allow(
        writes,
        [
            index
            for index, write in enumerate(writes)
            if write.expected is None or heads.get(write.key) == write.expected
        ],
        {key: row.owner for key, row in tracked.rows.items()},
    )
    conflicts: list[Conflict] = []

    published = matrices.published(session, [m.version for m in batch.matrices])
    fresh: list[MatrixPublication] = []
    for publication in batch.matrices:
        if publication.version in published:
            conflicts.append(Conflict(part="matrix", key=publication.version))
        else:
            fresh.append(publication)
            published.add(publication.version)  # the same version twice in one batch

    undeleted = waivers.undeleted(session, [d.id for d in batch.waivers_deleted])
    deleting: list[WaiverDeletion] = []
    deleted: dict[str, tuple[str, str, datetime]] = {}
    for deletion in batch.waivers_deleted:
        found = undeleted.pop(deletion.id, None)  # popped: the same id twice is one deletion
        if found is None:
            conflicts.append(Conflict(part="waiver-deleted", key=deletion.id))
        else:
            deleting.append(deletion)
            deleted[deletion.id] = found

    untracking: list[Untracking] = []
    for untrack in batch.untracked:
        if (untrack.kind, untrack.name) in tracked.rows:
            untracking.append(untrack)
        else:
            conflicts.append(Conflict(part="untracked", key=f"{untrack.kind}/{untrack.name}"))

    return _Admitted(
        decision_indexes=indexes,
        decisions=[writes[index] for index in indexes],
        matrices=fresh,
        waivers_deleted=deleting,
        deleted_waivers=deleted,
        untracked=untracking,
        conflicts=conflicts,
        tracked=tracked,
    )


def _owners_allow(
    writes: Sequence[DecisionWrite], indexes: list[int], held: dict[Key, str | None]
) -> list[int]:
    """`held` (the tracked owners) is updated in place: a submission admitted is the owner the
    next submission of the same manifest in this batch is held against."""
    admitted: list[int] = []
    for index in indexes:
        write = writes[index]
        if write.tracking is not None:
            if write.key in held and not write.tracking.may_replace(held[write.key]):
                continue
            held[write.key] = write.tracking.owner
        admitted.append(index)
    return admitted


def _entries(batch: Batch, admitted: _Admitted, now: datetime) -> list[list[Entry]]:
    """The entries of the parts admitted, part by part, in the log's order."""
    return [
        [decision_entry(write.decision, recorded_at=now) for write in admitted.decisions],
        [
            matrix_entry(
                version=m.version,
                document=m.document,
                published_by=m.published_by,
                published_at=m.published_at,
                provenance=None if m.provenance is None else m.provenance.document(),
            )
            for m in admitted.matrices
        ],
        [
            waiver_created_entry(
                waiver_id=w.id,
                rule=w.rule,
                kind=w.kind,
                name=w.name,
                justification=w.justification,
                expires_at=w.expires_at,
                created_by=w.created_by,
                created_at=w.created_at,
            )
            for w in batch.waivers_created
        ],
        [
            waiver_deleted_entry(waiver_id=d.id, deleted_by=d.deleted_by, deleted_at=d.deleted_at)
            for d in admitted.waivers_deleted
        ],
        [
            untracked_entry(kind=u.kind, name=u.name, untracked_by=u.untracked_by, at=u.at)
            for u in admitted.untracked
        ],
    ]


@dataclass(frozen=True, slots=True)
class _Leaves:
    decisions: list[int]
    matrices: list[int]
    waivers_created: list[int]
    waivers_deleted: list[int]
    untracked: list[int]


def _leaves(first: int, parts: list[list[Entry]]) -> _Leaves:
    ranges: list[list[int]] = []
    for part in parts:
        ranges.append(list(range(first, first + len(part))))
        first += len(part)
    return _Leaves(*ranges)


def _decision_events(admitted: _Admitted, delivered: int) -> list[Event]:
    """HardwareRecorded only where a pool's content changes (CONTRACT: cause `hardware` is a
    deployment re-evaluated because the pool it references changed): a pool CI re-posts as it
    was moves no deployment, and the lookup would cost every such POST."""
    writes = admitted.decisions
    events: list[Event] = []
    if writes:
        events.append(decisions_recorded((w.decision.verdict, w.decision.cause) for w in writes))
    digests = {key: row.content_digest for key, row in admitted.tracked.rows.items()}
    events.extend(
        HardwareRecorded(
            name=w.decision.manifest.name,
            decision_id=w.decision.id,
            evaluated_at=w.decision.evaluated_at,
        )
        for w in writes
        if w.tracking is not None
        and w.decision.manifest.kind == "HardwareManifest"
        and digests.get(w.key) != w.tracking.content_digest
    )
    if delivered:
        events.append(DeliveriesEnqueued(count=delivered))
    return events


def _waiver_events(session: Session, batch: Batch, admitted: _Admitted) -> list[WaiverChanged]:
    """A waiver change may move a verdict when its manifest is tracked (after this batch);
    deleting an expired waiver moves none."""
    events = [
        WaiverChanged(
            waiver_id=created.id,
            action="created",
            kind=created.kind,
            name=created.name,
            affects_tracked=tracking.is_tracked(session, created.kind, created.name),
        )
        for created in batch.waivers_created
    ]
    for deletion in admitted.waivers_deleted:
        kind, name, expires_at = admitted.deleted_waivers[deletion.id]
        events.append(
            WaiverChanged(
                waiver_id=deletion.id,
                action="deleted",
                kind=kind,
                name=name,
                affects_tracked=expires_at > deletion.deleted_at
                and tracking.is_tracked(session, kind, name),
            )
        )
    return events
