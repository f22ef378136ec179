"""The waivers (`waivers`): one fold of the log (`change_of`), and the one module that writes
them (docs/ledger.md). A deleted waiver's row stays: decisions name their waiver by id."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlmodel import Session

from supportgate.db import Waiver, table_of

_waivers = table_of(Waiver)

Change = tuple[str, dict[str, Any]]
"""A waiver's id and the columns one entry sets."""

COLUMNS = tuple(column.name for column in _waivers.c if column.name != "seq")
"""What the log says of a waiver (`seq`, the listing order, it does not)."""


def change_of(leaf_index: int, document: Mapping[str, Any]) -> Change | None:
    """The change an entry's document (decoded JSON) makes; None: no waiver's.
    KeyError, TypeError or ValueError: the entry is not well-formed."""
    at = datetime.fromisoformat(document["recorded_at"])
    if document["type"] == "waiver-deleted":
        deleted = {"deleted_at": at, "deleted_by": document["deleted_by"]}
        return document["waiver_id"], {**deleted, "deleted_leaf_index": leaf_index}
    if document["type"] != "waiver-created":
        return None
    waiver = document["waiver"]
    return waiver["id"], {
        "id": waiver["id"],
        "rule": waiver["rule"],
        "kind": waiver["manifest"]["kind"],
        "name": waiver["manifest"]["name"],
        "justification": waiver["justification"],
        "expires_at": datetime.fromisoformat(waiver["expires_at"]),
        "created_by": waiver["created_by"],
        "created_at": at,
        "leaf_index": leaf_index,
        "deleted_at": None,
        "deleted_by": None,
        "deleted_leaf_index": None,
    }


def fold(rows: dict[str, dict[str, Any]], changes: Iterable[Change]) -> None:
    for waiver_id, columns in changes:
        rows[waiver_id] = {**rows.get(waiver_id, {}), **columns}


def apply(session: Session, changes: Sequence[Change]) -> None:
    """Apply `changes` (in log order) forward: creations inserted, then deletions set."""
    created = [columns for _, columns in changes if "leaf_index" in columns]
    if created:
        session.execute(insert(_waivers), created)
    restore(session, [(i, c) for i, c in changes if "leaf_index" not in c])


def restore(session: Session, rows: Sequence[Change]) -> None:
    """Set, by waiver id, the columns each row holds (the same columns in every row)."""
    if rows:
        columns: dict[str, Any] = {c: bindparam(f"_{c}") for c in rows[0][1]}
        statement = update(_waivers).where(_waivers.c.id == bindparam("_wid")).values(columns)
        params = [{"_wid": i, **{f"_{k}": v for k, v in c.items()}} for i, c in rows]
        session.connection().execute(statement, params)


def undeleted(session: Session, waiver_ids: Sequence[str]) -> dict[str, tuple[str, str, datetime]]:
    """Of these waivers, those not deleted yet: id -> (kind, name, expires_at)."""
    if not waiver_ids:
        return {}
    statement = select(
        _waivers.c.id, _waivers.c.kind, _waivers.c.name, _waivers.c.expires_at
    ).where(_waivers.c.id.in_(sorted(set(waiver_ids))), _waivers.c.deleted_at.is_(None))
    return {row.id: (row.kind, row.name, row.expires_at) for row in session.execute(statement)}
