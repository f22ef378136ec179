"""The verifiable log: entries, tree nodes, head and checkpoints replace the hash chain.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

Written by hand to match supportgate/db/tables.py (the drift test compares the two).

Existing databases are migrated, after their old hash chain is checked (a broken chain is
refused, naming its first bad row: carrying it into a log would sign what was tampered
with): the chain's decisions become the first leaves, in `seq` order, then the published
matrix versions (by publication time), then the waivers created and deleted (by time), then
an `untracked` entry for each manifest with decisions that is no longer tracked. Each
row gets the `leaf_index` of its entry; the `prev_hash`/`hash` columns and the `audit_head`
row go. The first checkpoint is signed by the service when it next starts (a migration holds
no key). Downgrading rebuilds the chain from the decisions and drops the log.

Offline (`alembic upgrade --sql`) this renders for PostgreSQL and a new database only: the
rows' conversion needs to read them, and SQLite's column changes need the live table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec
import sqlalchemy as sa
from alembic import context, op
from sqlmodel import Session

from supportgate.db.types import JSONDocument, UTCDateTime
from supportgate.ledger.entries import (
    Entry,
    decision_entry,
    matrix_entry,
    untracked_entry,
    waiver_created_entry,
    waiver_deleted_entry,
)
from supportgate.ledger.log import append_entries, lock_head
from supportgate.manifests.decision import Decision
from supportgate.policy.inputs import format_time

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GENESIS_HASH = "0" * 64
CHUNK = 1000
_chain_encoder = msgspec.json.Encoder(order="sorted")

_DECISION_COLUMNS = (
    "seq",
    "id",
    "kind",
    "name",
    "verdict",
    "allowed",
    "cause",
    "matrix_version",
    "policy_revision",
    "input_digest",
    "evaluated_at",
    "recorded_at",
    "document",
)


def _big_key() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _decisions(*extra: sa.ColumnClause[Any]) -> sa.TableClause:
    return sa.table(
        "decisions",
        sa.column("seq", sa.BigInteger()),
        sa.column("id", sa.String()),
        sa.column("kind", sa.String()),
        sa.column("name", sa.String()),
        sa.column("verdict", sa.String()),
        sa.column("allowed", sa.Boolean()),
        sa.column("cause", sa.String()),
        sa.column("matrix_version", sa.String()),
        sa.column("policy_revision", sa.String()),
        sa.column("input_digest", sa.String()),
        sa.column("evaluated_at", UTCDateTime()),
        sa.column("recorded_at", UTCDateTime()),
        sa.column("document", JSONDocument),
        sa.column("leaf_index", sa.BigInteger()),
        *extra,
    )


_matrices = sa.table(
    "matrix_versions",
    sa.column("version", sa.String()),
    sa.column("document", JSONDocument),
    sa.column("published_at", UTCDateTime()),
    sa.column("published_by", sa.String()),
    sa.column("leaf_index", sa.BigInteger()),
)
_waivers = sa.table(
    "waivers",
    sa.column("id", sa.String()),
    sa.column("rule", sa.String()),
    sa.column("kind", sa.String()),
    sa.column("name", sa.String()),
    sa.column("justification", sa.Text()),
    sa.column("expires_at", UTCDateTime()),
    sa.column("created_by", sa.String()),
    sa.column("created_at", UTCDateTime()),
    sa.column("deleted_at", UTCDateTime()),
    sa.column("deleted_by", sa.String()),
    sa.column("leaf_index", sa.BigInteger()),
    sa.column("deleted_leaf_index", sa.BigInteger()),
)


def upgrade() -> None:
    op.create_table(
        "ledger_entries",
        sa.Column("leaf_index", _big_key(), primary_key=True, autoincrement=False, nullable=False),
        sa.Column("type", sa.String(), nullable=False),
        sa.Column("entry", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "type IN ('decision', 'matrix', 'waiver-created', 'waiver-deleted', 'untracked')",
            name="ck_ledger_entries_type",
        ),
    )
    op.create_table(
        "ledger_nodes",
        sa.Column(
            "level", sa.SmallInteger(), primary_key=True, autoincrement=False, nullable=False
        ),
        sa.Column("idx", _big_key(), primary_key=True, autoincrement=False, nullable=False),
        sa.Column("hash", sa.LargeBinary(), nullable=False),
    )
    op.create_table(
        "ledger_head",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False, nullable=False),
        sa.Column("size", _big_key(), nullable=False),
        sa.Column("root", sa.LargeBinary(), nullable=False),
        sa.CheckConstraint("id = 1", name="ck_ledger_head_single_row"),
    )
    _insert_empty_head()
    op.create_table(
        "ledger_checkpoints",
        sa.Column("tree_size", _big_key(), primary_key=True, autoincrement=False, nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("signed_at", sa.DateTime(timezone=True), nullable=False),
    )
    for table in ("decisions", "matrix_versions", "waivers"):
        op.add_column(table, sa.Column("leaf_index", _big_key(), nullable=True))
    op.add_column("waivers", sa.Column("deleted_leaf_index", _big_key(), nullable=True))

    if context.is_offline_mode():  # SQL for a new database: there is no old chain to read
        op.execute("-- 0005: an existing database's rows become entries only when run online")
    else:
        _check_old_chain()
        _append_existing_rows()

    with op.batch_alter_table("decisions") as batch:
        batch.alter_column("leaf_index", existing_type=_big_key(), nullable=False)
        batch.create_unique_constraint("uq_decisions_leaf_index", ["leaf_index"])
        batch.drop_column("prev_hash")
        batch.drop_column("hash")
    with op.batch_alter_table("matrix_versions") as batch:
        batch.alter_column("leaf_index", existing_type=_big_key(), nullable=False)
        batch.create_unique_constraint("uq_matrix_versions_leaf_index", ["leaf_index"])
    with op.batch_alter_table("waivers") as batch:
        batch.alter_column("leaf_index", existing_type=_big_key(), nullable=False)
        batch.create_unique_constraint("uq_waivers_leaf_index", ["leaf_index"])
        batch.create_unique_constraint("uq_waivers_deleted_leaf_index", ["deleted_leaf_index"])
    op.drop_table("audit_head")


def downgrade() -> None:
    audit_head = op.create_table(
        "audit_head",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False, nullable=False),
        sa.Column("last_seq", _big_key(), nullable=False),
        sa.Column("last_hash", sa.String(), nullable=False),
        sa.CheckConstraint("id = 1", name="ck_audit_head_single_row"),
    )
    op.add_column("decisions", sa.Column("prev_hash", sa.String(), nullable=True))
    op.add_column("decisions", sa.Column("hash", sa.String(), nullable=True))
    last_seq, last_hash = _rebuild_old_chain()
    op.bulk_insert(audit_head, [{"id": 1, "last_seq": last_seq, "last_hash": last_hash}])
    with op.batch_alter_table("decisions") as batch:
        batch.alter_column("prev_hash", existing_type=sa.String(), nullable=False)
        batch.alter_column("hash", existing_type=sa.String(), nullable=False)
        batch.drop_constraint("uq_decisions_leaf_index", type_="unique")
        batch.drop_column("leaf_index")
    with op.batch_alter_table("matrix_versions") as batch:
        batch.drop_constraint("uq_matrix_versions_leaf_index", type_="unique")
        batch.drop_column("leaf_index")
    with op.batch_alter_table("waivers") as batch:
        batch.drop_constraint("uq_waivers_deleted_leaf_index", type_="unique")
        batch.drop_constraint("uq_waivers_leaf_index", type_="unique")
        batch.drop_column("deleted_leaf_index")
        batch.drop_column("leaf_index")
    op.drop_table("ledger_checkpoints")
    op.drop_table("ledger_head")
    op.drop_table("ledger_nodes")
    op.drop_table("ledger_entries")


def _insert_empty_head() -> None:
    """The head of the empty log, its root the hash of nothing, as a literal (offline SQL
    cannot render bytes parameters)."""
    root = hashlib.sha256(b"").hexdigest()
    literal = (
        f"'\\x{root}'::bytea" if op.get_context().dialect.name == "postgresql" else f"X'{root}'"
    )
    op.execute(f"INSERT INTO ledger_head (id, size, root) VALUES (1, 0, {literal})")  # noqa: S608


# -- the old chain (supportgate before the log) ------------------------------------------------


def _old_chain_hash(row: Any, prev_hash: str) -> str:
    """The hash the chain gave a decision row: sha256 of the canonical JSON of its columns."""
    fields = {column: row[column] for column in _DECISION_COLUMNS if column != "recorded_at"}
    fields["evaluated_at"] = format_time(row["evaluated_at"])
    fields["prev_hash"] = prev_hash
    return hashlib.sha256(_chain_encoder.encode(fields)).hexdigest()


def _decision_chunks(table: sa.TableClause) -> Any:
    """The decisions in seq order, CHUNK rows per query."""
    connection = op.get_bind()
    after = 0
    while True:
        rows = connection.execute(
            sa.select(table).where(table.c.seq > after).order_by(table.c.seq).limit(CHUNK)
        ).all()
        if not rows:
            return
        yield [row._mapping for row in rows]
        after = rows[-1].seq


def _check_old_chain() -> None:
    table = _decisions(sa.column("prev_hash", sa.String()), sa.column("hash", sa.String()))
    prev_seq, prev_hash = 0, GENESIS_HASH
    for rows in _decision_chunks(table):
        for row in rows:
            wrong = (
                row["seq"] != prev_seq + 1
                or row["prev_hash"] != prev_hash
                or _old_chain_hash(row, prev_hash) != row["hash"]
            )
            if wrong:
                raise RuntimeError(
                    f"the audit chain is broken at seq {row['seq']} (id {row['id']}): run "
                    "`supportgate audit verify` with the previous release; a broken chain is "
                    "not carried into the verifiable log"
                )
            prev_seq, prev_hash = row["seq"], row["hash"]
    head = op.get_bind().execute(sa.text("SELECT last_seq, last_hash FROM audit_head")).first()
    if head is not None and (head.last_seq, head.last_hash) != (prev_seq, prev_hash):
        raise RuntimeError(
            f"the audit head names seq {head.last_seq}, but the chain ends at seq {prev_seq}: "
            "the chain is broken; it is not carried into the verifiable log"
        )


def _decision(row: Any) -> Decision:
    return msgspec.convert(
        {
            **row["document"],
            "id": row["id"],
            "manifest": {"kind": row["kind"], "name": row["name"]},
            "verdict": row["verdict"],
            "allowed": row["allowed"],
            "matrix_version": row["matrix_version"],
            "policy_revision": row["policy_revision"],
            "input_digest": row["input_digest"],
            "evaluated_at": row["evaluated_at"],
            "cause": row["cause"],
        },
        Decision,
    )


def _append_existing_rows() -> None:
    connection = op.get_bind()
    session = Session(bind=connection)
    head = lock_head(session)
    decisions = _decisions()
    for rows in _decision_chunks(decisions):
        entries = [decision_entry(_decision(row), recorded_at=row["recorded_at"]) for row in rows]
        first = head.size
        head = append_entries(session, head, entries)
        for offset, row in enumerate(rows):
            session.execute(
                sa.update(decisions)
                .where(decisions.c.seq == row["seq"])
                .values(leaf_index=first + offset)
            )
    matrices = connection.execute(
        sa.select(_matrices).order_by(_matrices.c.published_at, _matrices.c.version)
    ).all()
    for matrix in matrices:
        entry = matrix_entry(
            version=matrix.version,
            document=matrix.document,
            published_by=matrix.published_by,
            published_at=matrix.published_at,
            provenance=None,  # no version had one before migration 0008
        )
        head = _append_one(session, head, entry, _matrices, _matrices.c.version == matrix.version)
    waivers = connection.execute(sa.select(_waivers).order_by(_waivers.c.created_at)).all()
    for waiver in waivers:
        entry = waiver_created_entry(
            waiver_id=waiver.id,
            rule=waiver.rule,
            kind=waiver.kind,
            name=waiver.name,
            justification=waiver.justification,
            expires_at=waiver.expires_at,
            created_by=waiver.created_by,
            created_at=waiver.created_at,
        )
        head = _append_one(session, head, entry, _waivers, _waivers.c.id == waiver.id)
    deleted = sorted((w for w in waivers if w.deleted_at is not None), key=lambda w: w.deleted_at)
    for waiver in deleted:
        entry = waiver_deleted_entry(
            waiver_id=waiver.id, deleted_by=waiver.deleted_by or "", deleted_at=waiver.deleted_at
        )
        head = _append_one(
            session, head, entry, _waivers, _waivers.c.id == waiver.id, column="deleted_leaf_index"
        )
    _append_untracked(session, head)
    session.flush()


def _append_untracked(session: Session, head: Any) -> Any:
    """An `untracked` entry for each manifest that has decisions but is no longer tracked (the
    chain never recorded untracking): without it the log would lead to a tracked manifest the
    table does not hold. Its time is the migration's; `untracked_by` is unknown (null)."""
    gone = op.get_bind().execute(
        sa.text(
            "SELECT DISTINCT d.kind, d.name FROM decisions d WHERE NOT EXISTS (SELECT 1 FROM "
            "manifests m WHERE m.kind = d.kind AND m.name = d.name) ORDER BY d.kind, d.name"
        )
    )
    now = datetime.now(UTC)
    entries = [untracked_entry(kind=k, name=n, untracked_by=None, at=now) for k, n in gone]
    return append_entries(session, head, entries)


def _append_one(
    session: Session,
    head: Any,
    entry: Entry,
    table: sa.TableClause,
    where: Any,
    *,
    column: str = "leaf_index",
) -> Any:
    leaf_index = head.size
    moved = append_entries(session, head, [entry])
    session.execute(sa.update(table).where(where).values({column: leaf_index}))
    return moved


def _rebuild_old_chain() -> tuple[int, str]:
    decisions = _decisions(sa.column("prev_hash", sa.String()), sa.column("hash", sa.String()))
    connection = op.get_bind()
    last_seq, prev_hash = 0, GENESIS_HASH
    for rows in _decision_chunks(decisions):
        for row in rows:
            digest = _old_chain_hash(row, prev_hash)
            connection.execute(
                sa.update(decisions)
                .where(decisions.c.seq == row["seq"])
                .values(prev_hash=prev_hash, hash=digest)
            )
            last_seq, prev_hash = row["seq"], digest
    return last_seq, prev_hash
