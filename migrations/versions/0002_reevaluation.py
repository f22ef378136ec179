"""Re-evaluation sweeps, their per-manifest memos, and verdict-change alerts.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

Written by hand to match supportgate/db/tables.py (the drift test compares the two).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

VERDICTS = "('supported', 'experimental', 'rejected')"
CAUSES = "('submission', 'hardware', 'matrix', 'policy', 'waiver', 'schedule')"


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _big_key() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _time() -> sa.types.TypeEngine[Any]:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "sweeps",
        sa.Column("id", sa.String(), primary_key=True, nullable=False),
        sa.Column("trigger", sa.String(), nullable=False),
        sa.Column("cause", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("only", _json(), nullable=True),
        sa.Column("matrix_version", sa.String(), nullable=True),
        sa.Column("policy_revision", sa.String(), nullable=True),
        sa.Column("cursor_kind", sa.String(), nullable=True),
        sa.Column("cursor_name", sa.String(), nullable=True),
        sa.Column("evaluated", sa.Integer(), nullable=False),
        sa.Column("changed", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("requested_at", _time(), nullable=False),
        sa.Column("started_at", _time(), nullable=True),
        sa.Column("finished_at", _time(), nullable=True),
        sa.UniqueConstraint("trigger", name="uq_sweeps_trigger"),
        sa.CheckConstraint(f"cause IN {CAUSES}", name="ck_sweeps_cause"),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'finished', 'failed')", name="ck_sweeps_status"
        ),
    )
    op.create_index("ix_sweeps_status", "sweeps", ["status"])
    op.create_index("ix_sweeps_requested_at", "sweeps", ["requested_at"])

    op.create_table(
        "sweep_memos",
        sa.Column("kind", sa.String(), primary_key=True, nullable=False),
        sa.Column("name", sa.String(), primary_key=True, nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("stable_until", _time(), nullable=True),
    )

    op.create_table(
        "alerts",
        sa.Column("seq", _big_key(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("from_verdict", sa.String(), nullable=False),
        sa.Column("to_verdict", sa.String(), nullable=False),
        sa.Column("cause", sa.String(), nullable=False),
        sa.Column("matrix_version", sa.String(), nullable=False),
        sa.Column("at", _time(), nullable=False),
        sa.Column("decision_id", sa.String(), nullable=False),
        sa.UniqueConstraint("id", name="uq_alerts_id"),
        sa.ForeignKeyConstraint(["decision_id"], ["decisions.id"], name="fk_alerts_decision_id"),
        sa.CheckConstraint(f"from_verdict IN {VERDICTS}", name="ck_alerts_from_verdict"),
        sa.CheckConstraint(f"to_verdict IN {VERDICTS}", name="ck_alerts_to_verdict"),
        sa.CheckConstraint(f"cause IN {CAUSES}", name="ck_alerts_cause"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_alerts_at_seq", "alerts", ["at", "seq"])


def downgrade() -> None:
    op.drop_index("ix_alerts_at_seq", table_name="alerts")
    op.drop_table("alerts")
    op.drop_table("sweep_memos")
    op.drop_index("ix_sweeps_requested_at", table_name="sweeps")
    op.drop_index("ix_sweeps_status", table_name="sweeps")
    op.drop_table("sweeps")
