"""The waivers (`waivers`): the one module that writes them, in the ledger's transaction.
Reads for the API and the caches live in supportgate/waivers/repository.py."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Table, insert, select, update
from sqlmodel import Session

from supportgate.db import Waiver

from .batches import WaiverCreation, WaiverDeletion

_waivers: Table = Waiver.__table__  # type: ignore[attr-defined]


def insert_waivers(
    session: Session, created: Sequence[WaiverCreation], leaves: Sequence[int]
) -> None:
    """The waivers' rows, each with the leaf_index of its `waiver-created` entry."""
    if created:
        session.execute(
            insert(_waivers),
            [
                {
                    "id": w.id,
                    "rule": w.rule,
                    "kind": w.kind,
                    "name": w.name,
                    "justification": w.justification,
                    "expires_at": w.expires_at,
                    "created_by": w.created_by,
                    "created_at": w.created_at,
                    "leaf_index": leaf_index,
                }
                for w, leaf_index in zip(created, leaves, strict=True)
            ],
        )


def undeleted(session: Session, waiver_ids: Sequence[str]) -> dict[str, tuple[str, str, datetime]]:
    """Of these waivers, those not deleted yet: id -> (kind, name, expires_at)."""
    if not waiver_ids:
        return {}
    statement = select(
        _waivers.c.id, _waivers.c.kind, _waivers.c.name, _waivers.c.expires_at
    ).where(_waivers.c.id.in_(sorted(set(waiver_ids))), _waivers.c.deleted_at.is_(None))
    return {row.id: (row.kind, row.name, row.expires_at) for row in session.execute(statement)}


def mark_deleted(
    session: Session, deletions: Sequence[WaiverDeletion], leaves: Sequence[int]
) -> None:
    """Set deleted_at, deleted_by and the leaf_index of the `waiver-deleted` entry (the row
    stays: decisions name their waiver by id)."""
    for deletion, leaf_index in zip(deletions, leaves, strict=True):
        session.execute(
            update(_waivers)
            .where(_waivers.c.id == deletion.id)
            .values(
                deleted_at=deletion.deleted_at,
                deleted_by=deletion.deleted_by,
                deleted_leaf_index=leaf_index,
            )
        )
