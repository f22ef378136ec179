"""The waivers and the matrix versions are folds of the log: for random sequences of batches
creating and deleting waivers and publishing versions, the rows the writer applied forward are
the rows the log's entries replay to after every batch, and `audit rebuild-tracking` writes an
edited, lost or stray row back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, Table, delete, insert, select, update
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

import policies
from supportgate.audit.rebuild import rebuild_tracking
from supportgate.db import MatrixVersion, Waiver
from supportgate.ledger import matrices, waivers
from supportgate.ledger.batches import Batch, MatrixPublication, WaiverCreation, WaiverDeletion
from supportgate.ledger.log import entries_between, read_head
from supportgate.ledger.write import apply_batch
from supportgate.manifests import decode_matrix, to_builtins
from supportgate.matrix import prepare
from supportgate.policy.bundle import DEFAULT_MATRIX_FILE
from supportgate.policy.inputs import format_time

START = datetime(2026, 1, 1, tzinfo=UTC)
_waivers: Table = Waiver.__table__  # type: ignore[attr-defined]
_versions: Table = MatrixVersion.__table__  # type: ignore[attr-defined]
MATRIX = yaml.safe_load((Path(policies.__file__).parent / DEFAULT_MATRIX_FILE).read_text())
Rows = dict[str, dict[str, Any]]

plans = st.lists(
    st.lists(
        st.tuples(st.sampled_from(["create", "delete", "publish"]), st.integers(0, 3)), max_size=4
    ),
    min_size=1,
    max_size=6,
)
"""Batches, each of creations and deletions of waivers w0..w3 (a creation of an id stored
already is left out, as the service never makes one; a deletion of a waiver deleted already
or never created is a conflict the writer leaves out, as is a version published already)."""


def _apply(session: Session, plan: list[list[tuple[str, int]]], check: bool) -> None:
    now = START
    for parts in plan:
        now += timedelta(seconds=1)
        stored = set(session.execute(select(_waivers.c.id)).scalars())
        created: dict[str, WaiverCreation] = {}
        deleted: list[WaiverDeletion] = []
        published: list[MatrixPublication] = []
        for what, n in parts:
            if what == "publish":
                published.append(_publication(n, now))
            elif what == "delete":
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
            matrices=published,
        )
        apply_batch(session, batch, now)
        if check:
            assert _stored(session) == _replayed(session)


def _publication(n: int, now: datetime) -> MatrixPublication:
    document = {**MATRIX, "version": f"v{n}", "effective_from": format_time(now)}
    matrix = decode_matrix(msgspec.json.encode(document), fmt="json")
    return MatrixPublication(
        version=matrix.version,
        document=to_builtins(matrix),
        digest=prepare(matrix).key,
        effective_from=matrix.effective_from,
        published_at=now,
        published_by="admin",
    )


def _replayed(session: Session) -> tuple[Rows, Rows]:
    rows: Rows = {}
    versions: Rows = {}
    for entry in entries_between(session, 0, read_head(session).size - 1):
        leaf, document = int(entry.leaf_index), msgspec.json.decode(entry.entry)
        change = waivers.change_of(leaf, document)
        waivers.fold(rows, [change] if change else [])
        if (version := matrices.change_of(leaf, document)) is not None:
            versions[version["version"]] = version
    return rows, versions


def _stored(session: Session) -> tuple[Rows, Rows]:
    statement = select(*(_waivers.c[column] for column in waivers.COLUMNS))
    rows = {row["id"]: dict(row) for row in session.execute(statement).mappings()}
    versions = session.execute(select(_versions)).mappings()
    return rows, {row["version"]: dict(row) for row in versions}


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=plans)
def test_forward_and_replayed_waivers_and_versions_agree_after_every_batch(
    migrated_db: Engine, plan: list[list[tuple[str, int]]]
) -> None:
    with Session(migrated_db) as session:
        session.begin()
        try:
            _apply(session, plan, check=True)
        finally:
            session.rollback()


def test_rebuild_writes_edited_lost_and_stray_waivers_and_versions_back(
    migrated_db: Engine,
) -> None:
    sessions = sessionmaker(migrated_db, class_=Session)
    plan = [[("create", 0), ("create", 1), ("create", 2), ("publish", 0)], [("delete", 1)]]
    with sessions() as session, session.begin():
        _apply(session, plan, check=False)
        written = _stored(session)
    with sessions() as session, session.begin():
        session.execute(update(_waivers).where(_waivers.c.id == "w0").values(expires_at=START))
        session.execute(update(_waivers).where(_waivers.c.id == "w1").values(deleted_at=None))
        session.execute(delete(_waivers).where(_waivers.c.id == "w2"))
        session.execute(
            insert(_waivers).values(
                {**written[0]["w0"], "id": "stray", "leaf_index": 99, "deleted_leaf_index": None}
            )
        )
        session.execute(update(_versions).values(published_by="mallory"))
        session.execute(
            insert(_versions).values({**written[1]["v0"], "version": "v9", "leaf_index": 98})
        )
    rebuilt = rebuild_tracking(sessions)
    assert (rebuilt.waivers, rebuilt.matrices) == (4, 2)
    assert "rewrote 4 waiver rows; rewrote 2 matrix version rows" in rebuilt.summary()
    with sessions() as session:
        assert _stored(session) == written
    again = rebuild_tracking(sessions)
    assert (again.waivers, again.matrices) == (0, 0)
