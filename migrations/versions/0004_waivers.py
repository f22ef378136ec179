"""Waivers: a deny rule that does not reject one manifest until it expires.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30

Written by hand to match the waivers section of supportgate/db/tables.py (the drift test compares
the two). Deleted waivers keep their row (`deleted_at`): decisions name them by id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _big_key() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _time() -> sa.types.TypeEngine[Any]:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "waivers",
        sa.Column("seq", _big_key(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("rule", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("justification", sa.Text(), nullable=False),
        sa.Column("expires_at", _time(), nullable=False),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("deleted_at", _time(), nullable=True),
        sa.Column("deleted_by", sa.String(), nullable=True),
        sa.UniqueConstraint("id", name="uq_waivers_id"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_waivers_kind_name", "waivers", ["kind", "name"])
    op.create_index("ix_waivers_expires_at", "waivers", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_waivers_expires_at", table_name="waivers")
    op.drop_index("ix_waivers_kind_name", table_name="waivers")
    op.drop_table("waivers")
