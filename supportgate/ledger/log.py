"""The log in the database: entries, the tree's nodes and the head, appended in the writer's
transaction after `lock_head` (SELECT ... FOR UPDATE on PostgreSQL; SQLite holds the write lock
from BEGIN IMMEDIATE), so the log stays linear across threads, processes and replicas; and the
reads proofs and checkpoints need. docs/ledger.md says what each costs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, bindparam, insert, select, text, update
from sqlmodel import Session

from supportgate.db import table_of
from supportgate.db.bulk import append_rows
from supportgate.db.engine import conflict_insert
from supportgate.db.tables import (
    LEDGER_HEAD_ID,
    LedgerCheckpoint,
    LedgerEntry,
    LedgerHead,
    LedgerNode,
)
from supportgate.errors import NodeStoreError
from supportgate.tlog import EMPTY_ROOT, MerkleTree, NodeId

from .entries import Entry

_entries = table_of(LedgerEntry)
_nodes = table_of(LedgerNode)
_head = table_of(LedgerHead)
_checkpoints = table_of(LedgerCheckpoint)


@dataclass(frozen=True, slots=True)
class Head:
    size: int
    root: bytes


class SqlNodeStore:
    """The NodeStore protocol over `ledger_nodes`, inside one session's transaction."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def get(self, ids: Sequence[NodeId]) -> list[bytes]:
        if not ids:
            return []
        wanted = sorted({(node.level, node.index) for node in ids})
        # Plain text with one (level, idx) pair per node: both databases walk the primary key
        # for it (SQLite scans the table for a row-value `(level, idx) IN (...)`), and a text
        # statement skips SQLAlchemy's compiling, which costs more than the query here.
        pairs = " OR ".join(f"(level = :l{n} AND idx = :i{n})" for n in range(len(wanted)))
        params: dict[str, int] = {}
        for n, (level, index) in enumerate(wanted):
            params[f"l{n}"], params[f"i{n}"] = level, index
        rows = self._session.execute(
            text(f"SELECT level, idx, hash FROM ledger_nodes WHERE {pairs}"),  # noqa: S608
            params,
        )
        found = {(row.level, row.idx): bytes(row.hash) for row in rows}
        missing = [node for node in ids if (node.level, node.index) not in found]
        if missing:
            raise NodeStoreError(f"the log's {missing[0]} is not stored")
        return [found[(node.level, node.index)] for node in ids]

    def put(self, nodes: Sequence[tuple[NodeId, bytes]]) -> None:
        """New nodes only (the head lock makes this the one appender): a node stored again
        fails the primary key, which rolls the append back."""
        append_rows(
            self._session,
            _nodes,
            [{"level": node.level, "idx": node.index, "hash": digest} for node, digest in nodes],
        )


def read_head(session: Session) -> Head:
    row = session.execute(select(_head.c.size, _head.c.root)).first()
    return Head(0, EMPTY_ROOT) if row is None else Head(int(row.size), bytes(row.root))


def touch_head(session: Session) -> None:
    """A write that changes nothing, to learn whether the database takes writes (the writer's
    readiness; on SQLite after emptying the WAL: docs/ledger.md, "When the write fails")."""
    if session.get_bind().dialect.name == "sqlite":
        session.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
    session.execute(update(_head).values(size=_head.c.size))


def lock_head(session: Session) -> Head:
    """The head, locked until the transaction ends and freshly read; made (empty) when a
    database was created without the migrations."""
    row = session.execute(_LOCK_HEAD).first()
    if row is None:
        session.execute(insert(_head).values(id=LEDGER_HEAD_ID, size=0, root=EMPTY_ROOT))
        return Head(0, EMPTY_ROOT)
    return Head(int(row.size), bytes(row.root))


def append_entries(session: Session, head: Head, entries: Sequence[Entry]) -> Head:
    """`head` is from `lock_head` in this transaction."""
    if not entries:
        return head
    tree = grow_tree(session, head, entries)
    append_rows(
        session,
        _entries,
        [
            {
                "leaf_index": head.size + offset,
                "type": entry.type,
                "entry": entry.body.decode(),
                "recorded_at": entry.recorded_at,
            }
            for offset, entry in enumerate(entries)
        ],
    )
    moved = Head(tree.size, tree.root())
    session.execute(_MOVE_HEAD, {"size": moved.size, "root": moved.root})
    return moved


# Built once: building a statement costs about as much CPU as running it (docs/performance.md).
_LOCK_HEAD = (
    select(_head.c.size, _head.c.root).where(_head.c.id == LEDGER_HEAD_ID).with_for_update()
)
_MOVE_HEAD = (
    update(_head)
    .where(_head.c.id == LEDGER_HEAD_ID)
    .values(size=bindparam("size"), root=bindparam("root"))
)


def grow_tree(session: Session, head: Head, entries: Sequence[Entry]) -> MerkleTree:
    """The tree after `entries`, their new nodes stored: all an append spends on the tree
    (bench/bench_group_commit.py times it apart)."""
    tree = MerkleTree(SqlNodeStore(session), head.size)
    tree.append(entry.body for entry in entries)
    return tree


def tree(session: Session, size: int | None = None) -> MerkleTree:
    return MerkleTree(SqlNodeStore(session), read_head(session).size if size is None else size)


def entries_between(session: Session, first: int, last: int) -> Sequence[Row[Any]]:
    """The stored entries of leaves first..last, in leaf order, as rows (leaf_index, type,
    entry, recorded_at): a gap is an entry that is missing."""
    statement = (
        select(_entries.c.leaf_index, _entries.c.type, _entries.c.entry, _entries.c.recorded_at)
        .where(_entries.c.leaf_index.between(first, last))
        .order_by(_entries.c.leaf_index)
    )
    return session.execute(statement).all()


@dataclass(frozen=True, slots=True)
class StoredCheckpoint:
    tree_size: int
    note: str
    signed_at: datetime


def latest_checkpoint(session: Session) -> StoredCheckpoint | None:
    row = session.execute(
        select(_checkpoints.c.tree_size, _checkpoints.c.note, _checkpoints.c.signed_at)
        .order_by(_checkpoints.c.tree_size.desc())
        .limit(1)
    ).first()
    return None if row is None else StoredCheckpoint(int(row.tree_size), row.note, row.signed_at)


def store_checkpoint(session: Session, checkpoint: StoredCheckpoint) -> bool:
    """Keep a signed checkpoint; False when one of that tree size is stored already (another
    replica signed the same size first: the same key signs the same note, so nothing is lost)."""
    statement = conflict_insert(session, _checkpoints).values(
        tree_size=checkpoint.tree_size, note=checkpoint.note, signed_at=checkpoint.signed_at
    )
    statement = statement.on_conflict_do_nothing(index_elements=["tree_size"])
    return session.execute(statement.returning(_checkpoints.c.tree_size)).first() is not None
