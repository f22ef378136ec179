"""The waivers are one fold of the log: for random sequences of batches creating and deleting
waivers, the rows the writer applied forward are the rows the log's entries replay to after
every batch, and `audit rebuild-tracking` writes an edited, lost or stray row back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, Table, delete, insert, select, update
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.audit.rebuild import rebuild_tracking
from supportgate.db import Waiver
from supportgate.ledger import waivers
from supportgate.ledger.batches import Batch, WaiverCreation, WaiverDeletion
from supportgate.ledger.log import TreeEdge, entries_between, read_head
from supportgate.ledger.write import apply_batch

START = datetime(2026, 1, 1, tzinfo=UTC)
_waivers: Table = Waiver.__table__  # type: ignore[attr-defined]

plans = st.lists(
    st.lists(st.tuples(st.sampled_from(["create", "delete"]), st.integers(0, 3)), max_size=4),
    min_size=1,
    max_size=6,
)
"""Batches, each of creations and deletions of waivers w0..w3 (a creation of an id stored
already is left out, as the service never makes one; a deletion of a waiver deleted already
or never created is a conflict the writer leaves out)."""


def _apply(session: Session, plan: list[list[tuple[str, int]]], check: bool) -> None:
    now, edge = START, TreeEdge()
    for parts in plan:
        now += timedelta(seconds=1)
        stored = set(session.execute(select(_waivers.c.id)).scalars())
        created: dict[str, WaiverCreation] = {}
        deleted: list[WaiverDeletion] = []
        for what, n in parts:
            if what == "delete":
                deleted.append(WaiverDeletion(id=f"w{n}", deleted_by="admin", deleted_at=now))
            elif f"w{n}" not in stored:
                created[f"w{n}"] = WaiverCreation(
                    id=f"w{n}",
                    rule=f"rule.{n}",
                    kind="HardwareManifest",
                    name=f"m{n}",
                    justification="because",
                    expires_at=now + timedelta(days=n, microseconds=7),
                    created_by="admin",
                    created_at=now,
                )
        batch = Batch(
            waivers_created=list(created.values()),
            waivers_deleted=[d for d in deleted if d.id not in created],
        )
        apply_batch(session, batch, now, edge)
        if check:
            assert _stored(session) == _replayed(session)


def _replayed(session: Session) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for entry in entries_between(session, 0, read_head(session).size - 1):
        change = waivers.change_of(int(entry.leaf_index), msgspec.json.decode(entry.entry))
        waivers.fold(rows, [change] if change else [])
    return rows


def _stored(session: Session) -> dict[str, dict[str, Any]]:
    statement = select(*(_waivers.c[column] for column in waivers.COLUMNS))
    return {row["id"]: dict(row) for row in session.execute(statement).mappings()}


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=plans)
def test_forward_and_replayed_waivers_agree_after_every_batch(
    migrated_db: Engine, plan: list[list[tuple[str, int]]]
) -> None:
    with Session(migrated_db) as session:
        session.begin()
        try:
            _apply(session, plan, check=True)
        finally:
            session.rollback()


def test_rebuild_writes_edited_lost_and_stray_waivers_back(migrated_db: Engine) -> None:
    sessions = sessionmaker(migrated_db, class_=Session)
    plan = [[("create", 0), ("create", 1), ("create", 2)], [("delete", 1)]]
    with sessions() as session, session.begin():
        _apply(session, plan, check=False)
        written = _stored(session)
    with sessions() as session, session.begin():
        session.execute(update(_waivers).where(_waivers.c.id == "w0").values(expires_at=START))
        session.execute(update(_waivers).where(_waivers.c.id == "w1").values(deleted_at=None))
        session.execute(delete(_waivers).where(_waivers.c.id == "w2"))
        session.execute(
            insert(_waivers).values(
                {**written["w0"], "id": "stray", "leaf_index": 99, "deleted_leaf_index": None}
            )
        )
    rebuilt = rebuild_tracking(sessions)
    assert rebuilt.waivers == 4
    assert "rewrote 4 waiver rows" in rebuilt.summary()
    with sessions() as session:
        assert _stored(session) == written
    assert rebuild_tracking(sessions).waivers == 0
