"""The writer's kept frontier (log.TreeEdge) on SQLite and PostgreSQL, against the RFC's own
definition (rfc9162.mth over the stored entries): the same nodes and root after groups of
many sizes, after another writer moved the head, and after an append that rolled back while
another writer appended as many leaves; and no node read while the head is the one the edge
was left at."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import create_db_engine, session_factory, transaction
from supportgate.ledger.entries import Entry, untracked_entry
from supportgate.ledger.log import Head, SqlNodeStore, TreeEdge, append_entries, lock_head
from tests.tlog import rfc9162

AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
GROUPS = [1, 1, 2, 3, 5, 8, 13, 1, 30, 64, 7]  # sizes that cross many powers of two


class _RolledBack(Exception):
    pass


@pytest.fixture
def sessions(migrated_db_url: str) -> Iterator[sessionmaker[Session]]:
    db = create_db_engine(migrated_db_url)
    try:
        yield session_factory(db)
    finally:
        db.dispose()


def _entries(label: str, count: int) -> list[Entry]:
    return [
        untracked_entry(kind="HardwareManifest", name=f"{label}-{n}", untracked_by=None, at=AT)
        for n in range(count)
    ]


def _append(sessions: sessionmaker[Session], entries: list[Entry], edge: TreeEdge | None) -> Head:
    """One writer's transaction; `edge` None is the plain append (another writer)."""
    with transaction(sessions, write=True) as session:
        return append_entries(session, lock_head(session), entries, edge)


def _check_against_the_rfc(sessions: sessionmaker[Session]) -> None:
    """Every stored node is MTH of its leaves' entries, every complete subtree is stored, and
    the head's root is MTH of all the entries."""
    with transaction(sessions) as session:
        leaves = [
            row[0].encode()
            for row in session.execute(text("SELECT entry FROM ledger_entries ORDER BY leaf_index"))
        ]
        nodes = {
            (row[0], row[1]): bytes(row[2])
            for row in session.execute(text("SELECT level, idx, hash FROM ledger_nodes"))
        }
        size, root = session.execute(text("SELECT size, root FROM ledger_head")).one()
    assert size == len(leaves)
    assert bytes(root) == rfc9162.mth(leaves)
    expected = {
        (level, index): rfc9162.mth(leaves[index << level : (index + 1) << level])
        for level in range(len(leaves).bit_length())
        for index in range(len(leaves) >> level)
    }
    assert nodes == expected


def test_appends_from_the_kept_frontier_store_what_the_rfc_says(
    sessions: sessionmaker[Session],
) -> None:
    edge = TreeEdge()
    for number, size in enumerate(GROUPS):
        _append(sessions, _entries(f"g{number}", size), edge)
    _check_against_the_rfc(sessions)


def test_the_kept_frontier_is_left_when_another_writer_moved_the_head(
    sessions: sessionmaker[Session],
) -> None:
    ours, theirs = TreeEdge(), TreeEdge()
    _append(sessions, _entries("ours-1", 3), ours)
    _append(sessions, _entries("plain", 5), None)  # another replica
    _append(sessions, _entries("ours-2", 6), ours)
    _append(sessions, _entries("theirs", 2), theirs)  # another writer of this process
    _append(sessions, _entries("ours-3", 9), ours)
    _check_against_the_rfc(sessions)


def test_the_frontier_of_an_append_that_rolled_back_is_not_used(
    sessions: sessionmaker[Session],
) -> None:
    """The rolled-back append left the edge at a head of the same size as the one another
    writer then made: only the root tells them apart."""
    edge = TreeEdge()
    _append(sessions, _entries("first", 4), edge)

    def undone() -> None:
        with transaction(sessions, write=True) as session:
            append_entries(session, lock_head(session), _entries("undone", 3), edge)
            raise _RolledBack

    with pytest.raises(_RolledBack):
        undone()
    _append(sessions, _entries("other", 3), None)
    _append(sessions, _entries("after", 5), edge)
    _check_against_the_rfc(sessions)


def test_an_append_from_the_kept_frontier_reads_no_node(
    sessions: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    edge = TreeEdge()
    _append(sessions, _entries("first", 5), edge)

    def no_reads(_store: SqlNodeStore, ids: object) -> list[bytes]:
        raise AssertionError(f"read {ids!r}")

    with monkeypatch.context() as patched:
        patched.setattr(SqlNodeStore, "get", no_reads)
        _append(sessions, _entries("second", 7), edge)
        _append(sessions, _entries("third", 1), edge)
    _check_against_the_rfc(sessions)
