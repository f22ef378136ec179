"""The tracked state's history: `tracked_spans`, filled by replaying the log's fold.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05

Each decision entry opens a span of its manifest, the next decision or `untracked` entry
ends it (supportgate/ledger/tracking.py). The fleet at a date now reads the spans, so the
two indexes migration 0009 made for its grouping of the decisions are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import sqlalchemy as sa
from alembic import context, op
from sqlmodel import Session

from supportgate.ledger import tracking

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHUNK = 5000


def upgrade() -> None:
    key = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "tracked_spans",
        sa.Column("leaf_index", key, primary_key=True, autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("decision_id", sa.String(), nullable=False),
        sa.Column("valid_from", sa.DateTime(timezone=True), nullable=False),
        sa.Column("valid_to", sa.DateTime(timezone=True), nullable=True),
        sa.Column("tracked_since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index(
        "ix_tracked_spans_valid", "tracked_spans", ["valid_from", "valid_to", "leaf_index"]
    )
    op.create_index(
        "uq_tracked_spans_open",
        "tracked_spans",
        ["kind", "name"],
        unique=True,
        postgresql_where=sa.text("valid_to IS NULL"),
        sqlite_where=sa.text("valid_to IS NULL"),
    )
    op.drop_index("ix_ledger_entries_type_recorded_at", table_name="ledger_entries")
    op.drop_index("ix_decisions_kind_name_recorded_at_seq", table_name="decisions")
    if not context.is_offline_mode():
        _replay()


def _replay() -> None:
    """The spans of the entries stored, written as the writer writes them."""
    session = Session(bind=op.get_bind())
    open_spans: dict[tuple[str, str], tracking.Span] = {}
    first = 0
    while True:
        rows = session.execute(
            sa.text(
                "SELECT leaf_index, entry FROM ledger_entries WHERE leaf_index >= :first"
                " AND type IN ('decision', 'untracked') ORDER BY leaf_index LIMIT :n"
            ),
            {"first": first, "n": CHUNK},
        ).all()
        if not rows:
            break
        changes = [tracking.change_of(int(leaf), msgspec.json.decode(text)) for leaf, text in rows]
        tracking.advance(session, open_spans, [change for change in changes if change])
        first = int(rows[-1][0]) + 1


def downgrade() -> None:
    op.create_index(
        "ix_decisions_kind_name_recorded_at_seq",
        "decisions",
        ["kind", "name", "recorded_at", "seq"],
    )
    op.create_index("ix_ledger_entries_type_recorded_at", "ledger_entries", ["type", "recorded_at"])
    op.drop_index("uq_tracked_spans_open", table_name="tracked_spans")
    op.drop_index("ix_tracked_spans_valid", table_name="tracked_spans")
    op.drop_table("tracked_spans")
