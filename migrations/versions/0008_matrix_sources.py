"""Matrix sources: the provenance of a version read from one, and each source's sync state.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

Written by hand to match supportgate/db/tables.py (the drift test compares the two). The
versions published before have no provenance (they were posted). The state's only writer is
supportgate/matrix_sources/repository.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _time() -> sa.types.TypeEngine[Any]:
    return sa.DateTime(timezone=True)


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("matrix_versions") as table:
        table.add_column(sa.Column("provenance", _json(), nullable=True))
    op.create_table(
        "matrix_source_state",
        sa.Column("source", sa.String(), primary_key=True, nullable=False),
        sa.Column("revision", sa.String(), nullable=True),
        sa.Column("version", sa.String(), nullable=True),
        sa.Column("last_sync_at", _time(), nullable=True),
        sa.Column("last_success_at", _time(), nullable=True),
        sa.Column("last_published_version", sa.String(), nullable=True),
        sa.Column("last_published_at", _time(), nullable=True),
        sa.Column("error_kind", sa.String(), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("error_field", sa.String(), nullable=True),
        sa.Column("error_revision", sa.String(), nullable=True),
        sa.Column("error_at", _time(), nullable=True),
        sa.Column("consecutive_failures", sa.Integer(), nullable=False),
        sa.Column("failures_total", sa.Integer(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("matrix_source_state")
    with op.batch_alter_table("matrix_versions") as table:
        table.drop_column("provenance")
