"""The one module that writes `sweeps` and `sweep_memos`. A sweep's progress commits with its
batch's decisions, so a sweep killed at any point resumes after the last batch written, never
recording a decision twice; its start and end are transactions of their own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, select, update
from sqlmodel import Session

from supportgate.db import Sweep, table_of
from supportgate.db import SweepMemo as SweepMemoRow
from supportgate.db.bulk import append_rows
from supportgate.db.engine import conflict_insert
from supportgate.db.keys import in_keys

from .batches import SweepMemo, SweepProgress

_sweeps = table_of(Sweep)
_memos = table_of(SweepMemoRow)


def insert_sweep(session: Session, values: dict[str, Any]) -> str:
    """The id of the sweep for values["trigger"]: this one, or the one already there."""
    statement = conflict_insert(session, _sweeps).values(**values)
    session.execute(statement.on_conflict_do_nothing(index_elements=["trigger"]))
    found = session.execute(
        select(_sweeps.c.id).where(_sweeps.c.trigger == values["trigger"])
    ).scalar_one()
    return str(found)


def update_sweep(session: Session, sweep_id: str, **values: Any) -> None:
    session.execute(update(_sweeps).where(_sweeps.c.id == sweep_id).values(**values))


def advance(session: Session, progress: SweepProgress, *, changed: int) -> None:
    cursor = progress.cursor
    session.execute(
        update(_sweeps)
        .where(_sweeps.c.id == progress.sweep_id)
        .values(
            cursor_kind=cursor[0],
            cursor_name=cursor[1],
            evaluated=_sweeps.c.evaluated + progress.evaluated,
            changed=_sweeps.c.changed + changed,
            failed=_sweeps.c.failed + progress.failed,
        )
    )


def save_memos(session: Session, memos: Sequence[SweepMemo]) -> None:
    """Replaced by a DELETE and one bulk insert (COPY on PostgreSQL), not an upsert a row:
    under the head lock nobody else writes them."""
    if not memos:
        return
    rows = [
        {"kind": m.kind, "name": m.name, "key": m.key, "stable_until": m.stable_until}
        for m in memos
    ]
    session.execute(delete(_memos).where(in_keys(_memos, [(m.kind, m.name) for m in memos])))
    append_rows(session, _memos, rows)
