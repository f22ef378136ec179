"""`supportgate audit rebuild-tracking`: restore the tracked-manifest table from the log.

One write transaction under the log's head lock, so no writer appends meanwhile and the
table ends as one state with the log: the entries are followed in leaf order
(tracking_state.py), and every row that is not what the log leads to is replaced, every
missing one inserted, every one the log does not track deleted. `created_at` and
`last_evaluated_at` are kept where they lie within what the log allows (it records neither
a re-tracking before migration 0005 nor a sweep that found a manifest unchanged); else they
become the first decision's recorded_at and the latest decision's evaluated_at.

It refuses (UnusableInput) when an entry is not well-formed, or a latest decision's stored
input is gone or edited: the content to track is then unknown, and `supportgate audit
verify` names what was edited.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import transaction
from supportgate.ledger import tracking as tracked_manifests
from supportgate.ledger.log import entries_between, lock_head

from .tracking_state import (
    Difference,
    ExpectedRow,
    Key,
    TrackingFromLog,
    UnusableInput,
    differences,
)

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

    def summary(self) -> str:
        state = f"{self.tracked} tracked manifests, from {self.entries} entries"
        if not (self.inserted or self.updated or self.deleted):
            return f"the tracked-manifest table already agrees with the log: {state}"
        changes = [
            _listed(
                "restored", [f"{_name(key)} ({', '.join(cols)})" for key, cols in self.updated]
            ),
            _listed("added", [_name(key) for key in self.inserted]),
            _listed("removed", [_name(key) for key in self.deleted]),
        ]
        return f"rebuilt the tracked-manifest table from the log ({state}): " + "; ".join(
            change for change in changes if change
        )


def rebuild_tracking(sessions: sessionmaker[Session]) -> Rebuilt:
    with transaction(sessions, write=True) as session:
        head = lock_head(session)
        tracking = TrackingFromLog()
        for first in range(0, head.size, CHUNK):
            for entry in entries_between(session, first, min(head.size, first + CHUNK) - 1):
                _follow(tracking, int(entry.leaf_index), entry.entry)
        found = differences(session, tracking.expected_rows(session))
        rebuilt = Rebuilt(head.size, len(tracking), [], [], [])
        for difference in found:
            _restore(session, difference, rebuilt)
    return rebuilt


def _follow(tracking: TrackingFromLog, leaf_index: int, entry: str) -> None:
    try:
        tracking.add(leaf_index, msgspec.json.decode(entry))
    except (msgspec.DecodeError, KeyError, TypeError, AttributeError) as exc:
        raise UnusableInput(leaf_index, "its entry is not well-formed") from exc


def _restore(session: Session, difference: Difference, rebuilt: Rebuilt) -> None:
    key, expected, row = difference.key, difference.expected, difference.row
    if expected is None:
        tracked_manifests.untrack(session, *key)
        rebuilt.deleted.append(key)
        return
    values = _row(expected, row)
    if row is None:
        tracked_manifests.insert_row(session, values)
        rebuilt.inserted.append(key)
        return
    tracked_manifests.replace_row(session, values)
    rebuilt.updated.append(
        (key, [column for column, value in values.items() if row[column] != value])
    )


def _row(expected: ExpectedRow, row: Mapping[Any, Any] | None) -> dict[str, Any]:
    created_at = expected.created_from
    last_evaluated_at = expected.evaluated_from
    if row is not None:
        if expected.created_from <= row["created_at"] <= expected.updated_at:
            created_at = row["created_at"]
        if row["last_evaluated_at"] is not None and row["last_evaluated_at"] >= last_evaluated_at:
            last_evaluated_at = row["last_evaluated_at"]
    return {
        "kind": expected.kind,
        "name": expected.name,
        "owner": expected.owner,
        "content": expected.content,
        "content_digest": expected.content_digest,
        "hardware_ref": expected.hardware_ref,
        "latest_decision_id": expected.latest_decision_id,
        "latest_verdict": expected.latest_verdict,
        "created_at": created_at,
        "updated_at": expected.updated_at,
        "last_evaluated_at": last_evaluated_at,
    }


def _listed(change: str, names: list[str]) -> str:
    if not names:
        return ""
    shown = ", ".join(names[:SHOWN])
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return f"{change} {len(names)}: {shown}{more}"


def _name(key: Key) -> str:
    return f"{key[0]}/{key[1]}"
