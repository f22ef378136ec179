"""`supportgate audit rebuild-tracking` (docs/audit-verify.md). UnusableInput when the content
to track is unknown: an entry not well-formed, a stored input gone or edited."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import msgspec
from sqlalchemy import delete, select
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import LedgerEntry, MatrixVersion, TrackedSpan, Waiver, table_of, transaction
from supportgate.errors import ManifestError
from supportgate.ledger import matrices, tracking, waivers
from supportgate.ledger.batches import Key
from supportgate.ledger.log import entries_between, lock_head
from supportgate.ledger.tracking import Span

from .tracking_state import (
    Difference,
    TrackingFromLog,
    UnusableInput,
    differences,
    span_wrongs,
    tracking_of,
)

_entries = table_of(LedgerEntry)
_spans = table_of(TrackedSpan)
_waivers = table_of(Waiver)
_matrices = table_of(MatrixVersion)
_NOT_WELL_FORMED = (
    msgspec.DecodeError,
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    ManifestError,
)
_Rows = dict[str, dict[str, Any]]
"""A fold's rows by key (a waiver's id, a matrix version)."""

CHUNK = 5000
SHOWN = 10
"""Manifests named per kind of change in the summary."""


@dataclass(frozen=True, slots=True)
class Rebuilt:
    entries: int
    tracked: int
    inserted: list[Key]
    updated: list[tuple[Key, list[str]]]
    """Each manifest replaced, with the columns that changed."""
    deleted: list[Key]
    spans: int = 0
    """Spans written again or deleted."""
    waivers: int = 0
    """Waiver rows written again or deleted."""
    matrices: int = 0
    """Matrix version rows written again or deleted."""

    def summary(self) -> str:
        state = f"{self.tracked} tracked manifests, from {self.entries} entries"
        changes = [
            _listed(
                "restored", [f"{_name(key)} ({', '.join(cols)})" for key, cols in self.updated]
            ),
            _listed("added", [_name(key) for key in self.inserted]),
            _listed("removed", [_name(key) for key in self.deleted]),
            f"rewrote {self.spans} spans of its history" if self.spans else "",
            f"rewrote {self.waivers} waiver rows" if self.waivers else "",
            f"rewrote {self.matrices} matrix version rows" if self.matrices else "",
        ]
        if not any(changes):
            return f"the tracked-manifest table already agrees with the log: {state}"
        return f"rebuilt the tracked-manifest table from the log ({state}): " + "; ".join(
            change for change in changes if change
        )


def rebuild_tracking(sessions: sessionmaker[Session]) -> Rebuilt:
    with transaction(sessions, write=True) as session:
        head = lock_head(session)
        spans = _drop_stray_spans(session)
        replay, waiver_rows, matrix_rows = TrackingFromLog(), _Rows(), _Rows()
        for first in range(0, head.size, CHUNK):
            for entry in entries_between(session, first, min(head.size, first + CHUNK) - 1):
                _follow(replay, waiver_rows, matrix_rows, int(entry.leaf_index), entry.entry)
            spans += _respan(session, replay.drain())
        spans += _respan(session, list(replay.open.values()))
        found = differences(session, replay.expected_rows(session))
        rewritten = (_rewaive(session, waiver_rows), _rematrix(session, matrix_rows))
        rebuilt = Rebuilt(head.size, len(replay.open), [], [], [], spans, *rewritten)
        for difference in found:
            _restore(session, replay, difference, rebuilt)
    return rebuilt


def _drop_stray_spans(session: Session) -> int:
    decisions = select(_entries.c.leaf_index).where(_entries.c.type == "decision")
    result = session.execute(delete(_spans).where(_spans.c.leaf_index.not_in(decisions)))
    return int(result.rowcount)  # type: ignore[attr-defined]


def _respan(session: Session, spans: list[Span]) -> int:
    wrong = [span for span, _ in span_wrongs(session, spans)]
    if wrong:
        leaves = [span.leaf_index for span in wrong]
        session.execute(delete(_spans).where(_spans.c.leaf_index.in_(leaves)))
        tracking.write_spans(session, wrong)
    return len(wrong)


def _rewaive(session: Session, log_rows: _Rows) -> int:
    log_rows = {i: row for i, row in log_rows.items() if "leaf_index" in row}  # created
    stored = {row["id"]: dict(row) for row in session.execute(select(_waivers)).mappings()}
    stray = stored.keys() - log_rows.keys()
    if stray:
        session.execute(delete(_waivers).where(_waivers.c.id.in_(sorted(stray))))
    wrong = [
        (waiver_id, row)
        for waiver_id, row in log_rows.items()
        if waiver_id in stored and any(stored[waiver_id][c] != row[c] for c in waivers.COLUMNS)
    ]
    waivers.restore(session, wrong)
    missing = [(i, row) for i, row in log_rows.items() if i not in stored]
    waivers.apply(session, missing)
    return len(stray) + len(wrong) + len(missing)


def _rematrix(session: Session, log_rows: _Rows) -> int:
    stored = {row["version"]: dict(row) for row in session.execute(select(_matrices)).mappings()}
    wrong = [version for version, row in stored.items() if log_rows.get(version) != row]
    if wrong:
        session.execute(delete(_matrices).where(_matrices.c.version.in_(wrong)))
    matrices.insert_versions(session, [row for v, row in log_rows.items() if stored.get(v) != row])
    return len(wrong) + len(log_rows.keys() - stored.keys())


def _follow(
    replay: TrackingFromLog, waiver_rows: _Rows, matrix_rows: _Rows, leaf_index: int, entry: str
) -> None:
    try:
        document = msgspec.json.decode(entry)
        replay.add(leaf_index, document)
        waivers.fold(waiver_rows, filter(None, [waivers.change_of(leaf_index, document)]))
        if (version := matrices.change_of(leaf_index, document)) is not None:
            matrix_rows[version["version"]] = version
    except _NOT_WELL_FORMED as exc:
        raise UnusableInput(leaf_index, "its entry is not well-formed") from exc


def _restore(
    session: Session, replay: TrackingFromLog, difference: Difference, rebuilt: Rebuilt
) -> None:
    """The row as the writer writes it (tracking.write_current), its times kept where the
    log allows them."""
    key, expected, row = difference.key, difference.expected, difference.row
    if expected is None:
        tracking.write_current(session, {key: None}, {}, {})
        rebuilt.deleted.append(key)
        return
    span, change = replay.open[key], replay.latest[key]
    created_at, last_evaluated_at = expected["created_at"], expected["last_evaluated_at"]
    if row is not None:
        if created_at <= row["created_at"] <= expected["updated_at"]:
            created_at = row["created_at"]
        if row["last_evaluated_at"] is not None and row["last_evaluated_at"] >= last_evaluated_at:
            last_evaluated_at = row["last_evaluated_at"]
        tracking.write_current(session, {key: None}, {}, {})  # replaced whole, created_at too
    span = replace(span, tracked_since=created_at)
    content = tracking_of(key[0], expected["content"])
    tracking.write_current(
        session, {key: span}, {key: change}, {key: content}, {key: last_evaluated_at}
    )
    if row is None:
        rebuilt.inserted.append(key)
        return
    values = tracking.current_row(span, change.verdict, content, last_evaluated_at)
    rebuilt.updated.append(
        (key, [column for column, value in values.items() if row[column] != value])
    )


def _listed(change: str, names: list[str]) -> str:
    if not names:
        return ""
    shown = ", ".join(names[:SHOWN])
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return f"{change} {len(names)}: {shown}{more}"


def _name(key: Key) -> str:
    return f"{key[0]}/{key[1]}"
