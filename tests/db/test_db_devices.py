"""COPY (`db/bulk.py append_rows` on PostgreSQL, a speed device: docs/performance.md) against
its plain path, executemany INSERT: the same rows both ways."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import JSON, Column, DateTime, Integer, MetaData, Table, Text, insert, select
from sqlmodel import Session

from supportgate.db import create_db_engine, session_factory, transaction
from supportgate.db.bulk import append_rows
from tests.services import temporary_database

pytestmark = pytest.mark.postgres

_metadata = MetaData()
_copied, _inserted = (
    Table(
        name,
        _metadata,
        Column("seq", Integer, primary_key=True),
        Column("kind", Text, nullable=False),
        Column("name", Text, nullable=False),
        Column("note", Text),
        Column("document", JSON, nullable=False),
        Column("at", DateTime(timezone=True), nullable=False),
    )
    for name in ("copied", "inserted")
)
_AT = datetime(2026, 12, 5, 7, 0, 0, 123456, tzinfo=UTC)
# What COPY's text format escapes: tabs, newlines, backslashes, its NULL marker \N.
_AWKWARD = ["plain", "tab\there", "line\nbreak", "back\\slash", "\\N", "", "ünï 🙂", "'q\""]


@pytest.fixture
def session(postgres_url: str) -> Iterator[Session]:
    with temporary_database(postgres_url) as url:
        engine = create_db_engine(url)
        _metadata.create_all(engine)
        try:
            with transaction(session_factory(engine)) as session:
                yield session
        finally:
            engine.dispose()


def _rows() -> list[dict[str, Any]]:
    return [
        {
            "seq": seq,
            "kind": ("HardwareManifest", "DeploymentManifest")[seq % 2],
            "name": value,
            "note": None if seq % 3 == 0 else value,
            "document": {"text": value, "list": [seq, None, 1.5], "nested": {"k": value}},
            "at": _AT,
        }
        for seq, value in enumerate(_AWKWARD * 2)
    ]


def test_copy_stores_what_executemany_stores(session: Session) -> None:
    append_rows(session, _copied, _rows())
    session.execute(insert(_inserted), _rows())  # the plain path (SQLite's)
    copied = session.execute(select(_copied).order_by(_copied.c.seq)).all()
    assert copied == session.execute(select(_inserted).order_by(_inserted.c.seq)).all()
    assert len(copied) == len(_rows())
