"""An attacker who can write the database and run the project's own code.

Edits go through the database's own command-line client (`sqlite3`, `psql`), behind the
service's back. `recompute_tree` then rewrites `ledger_nodes` and `ledger_head` from the
edited entries with supportgate's own hash functions, and the attacker may run
`supportgate audit rebuild-tracking` to make the tracked-manifest table agree too: after
that, only a signed checkpoint the attacker cannot rewrite still disagrees.
"""

# ruff: noqa: S608 - the attacker's SQL is text on purpose: what sqlite3 and psql are fed

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec
from sqlalchemy import delete, insert, select, text, update
from sqlalchemy.engine import make_url

from supportgate.audit.rebuild import rebuild_tracking
from supportgate.db import (
    Decision,
    LedgerEntry,
    LedgerHead,
    LedgerNode,
    create_db_engine,
    session_factory,
)
from supportgate.ledger.entries import decision_entry
from supportgate.ledger.rows import decision_from_columns
from supportgate.tlog import MerkleTree, NodeId

LEAF_COLUMNS = (
    ("ledger_entries", "leaf_index"),
    ("decisions", "leaf_index"),
    ("matrix_versions", "leaf_index"),
    ("waivers", "leaf_index"),
    ("waivers", "deleted_leaf_index"),
)
"""Every column holding a leaf index: what renumbering must move."""

_entries = LedgerEntry.__table__  # type: ignore[attr-defined]
_nodes = LedgerNode.__table__  # type: ignore[attr-defined]
_head = LedgerHead.__table__  # type: ignore[attr-defined]
_decisions = Decision.__table__  # type: ignore[attr-defined]


def run_sql(url: str, statements: str) -> None:
    """Run SQL statements in one transaction with the database's command-line client."""
    parsed = make_url(url)
    script = f"BEGIN;\n{statements}\nCOMMIT;\n"
    if parsed.get_backend_name() == "sqlite":
        command = [_tool("sqlite3"), "-bail", parsed.database or ""]
    else:
        conninfo = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
        command = [_tool("psql"), conninfo, "-q", "-v", "ON_ERROR_STOP=1", "-f", "-"]
    done = subprocess.run(command, input=script, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{command[0]} failed: {done.stderr}\n{script}"


def _tool(name: str) -> str:
    found = shutil.which(name)
    assert found is not None, f"the tamper tests edit with the `{name}` command-line tool"
    return found


def quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def time_literal(url: str, moment: datetime) -> str:
    """A time as each database stores it (SQLite: SQLAlchemy's text, UTC)."""
    if make_url(url).get_backend_name() == "sqlite":
        return quoted(moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f"))
    return quoted(moment.astimezone(UTC).isoformat())


def hash_literal(url: str, byte: int) -> str:
    """A 32-byte hash of `byte` repeated, as an SQL literal (a blob, a bytea)."""
    digits = f"{byte:02x}" * 32
    return f"X'{digits}'" if make_url(url).get_backend_name() == "sqlite" else f"'\\x{digits}'"


def shift_leaves(first: int, by: int) -> str:
    """SQL moving every leaf index from `first` on by `by` (through negative values, so no
    unique index sees two rows at one index half way)."""
    return "\n".join(
        f"UPDATE {table} SET {column} = -{column} - 1 WHERE {column} >= {first};\n"
        f"UPDATE {table} SET {column} = -{column} - 1 + ({by}) WHERE {column} < 0;"
        for table, column in LEAF_COLUMNS
    )


def recompute_everything(url: str) -> None:
    """Rewrite every tree node and the head from the entries as they now are, then the
    tracked-manifest table (with `supportgate audit rebuild-tracking`'s own code)."""
    recompute_tree(url)
    engine = create_db_engine(url)
    try:
        rebuild_tracking(session_factory(engine))
    finally:
        engine.dispose()


def recompute_tree(url: str) -> None:
    """Rewrite every tree node and the head from the entries as they now are."""
    engine = create_db_engine(url)
    try:
        with engine.begin() as connection:
            leaves = connection.execute(
                select(_entries.c.leaf_index, _entries.c.entry).order_by(_entries.c.leaf_index)
            ).all()
            assert [leaf for leaf, _ in leaves] == list(range(len(leaves))), "renumber first"
            store = _CollectedNodes()
            tree = MerkleTree(store)
            tree.append(entry.encode() for _, entry in leaves)
            connection.execute(delete(_nodes))
            if store.nodes:
                connection.execute(
                    insert(_nodes),
                    [{"level": n.level, "idx": n.index, "hash": h} for n, h in store.nodes],
                )
            connection.execute(update(_head).values(size=tree.size, root=tree.root()))
    finally:
        engine.dispose()


class _CollectedNodes:
    def __init__(self) -> None:
        self.nodes: list[tuple[NodeId, bytes]] = []

    def get(self, ids: Sequence[NodeId]) -> list[bytes]:
        assert not ids
        return []

    def put(self, nodes: Sequence[tuple[NodeId, bytes]]) -> None:
        self.nodes.extend(nodes)


def forged_decision(url: str, like_leaf: int, *, forged_id: str, recorded_at: datetime) -> str:
    """The canonical entry of a decision copied from the one at `like_leaf` but `supported`,
    with another id and recorded_at: made with the ledger's own encoder."""
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            row = (
                connection.execute(select(_decisions).where(_decisions.c.leaf_index == like_leaf))
                .mappings()
                .one()
            )
    finally:
        engine.dispose()
    decision = decision_from_columns(row)
    forged = msgspec.structs.replace(decision, id=forged_id, verdict="supported", allowed=True)
    return decision_entry(forged, recorded_at=recorded_at).body.decode()


def insert_forged_decision(
    url: str, leaf: int, like_leaf: int, *, forged_id: str, recorded_at: datetime
) -> str:
    """SQL adding the forged decision at `leaf`: its entry, its row, its rule rows."""
    entry = forged_decision(url, like_leaf, forged_id=forged_id, recorded_at=recorded_at)
    at = time_literal(url, recorded_at)
    allowed = "1" if make_url(url).get_backend_name() == "sqlite" else "true"
    columns = (
        "kind, name, cause, matrix_version, policy_revision, input_digest, evaluated_at, "
        "document, policy_input"
    )
    return f"""
INSERT INTO ledger_entries (leaf_index, type, entry, recorded_at)
    VALUES ({leaf}, 'decision', {quoted(entry)}, {at});
INSERT INTO decisions (seq, id, verdict, allowed, recorded_at, leaf_index, {columns})
    SELECT (SELECT max(seq) + 1 FROM decisions), {quoted(forged_id)}, 'supported', {allowed},
           {at}, {leaf}, {columns}
    FROM decisions WHERE leaf_index = {like_leaf};
INSERT INTO decision_rules (decision_seq, rule, severity)
    SELECT (SELECT max(seq) FROM decisions), rule, severity FROM decision_rules
    WHERE decision_seq = (SELECT seq FROM decisions WHERE leaf_index = {like_leaf});
"""


def leaves(url: str, **where: Any) -> list[dict[str, Any]]:
    """The decisions (leaf_index, id, kind, name, verdict, cause, seq), in leaf order, that
    match `where` (column = value)."""
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            statement = select(
                _decisions.c.leaf_index,
                _decisions.c.id,
                _decisions.c.kind,
                _decisions.c.name,
                _decisions.c.verdict,
                _decisions.c.cause,
                _decisions.c.seq,
            ).order_by(_decisions.c.leaf_index)
            for column, value in where.items():
                statement = statement.where(_decisions.c[column] == value)
            return [dict(row) for row in connection.execute(statement).mappings()]
    finally:
        engine.dispose()


def scalar(url: str, query: str) -> Any:
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(text(query)).scalar()
    finally:
        engine.dispose()
