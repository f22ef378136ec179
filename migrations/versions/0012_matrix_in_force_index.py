"""The matrix version in force at a date is an index read.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05

The version in force at T is the latest by coalesce(effective_from, published_at)
(supportgate/fleet/query.py); the index on effective_from alone did not serve that order.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_matrix_versions_effective_from", table_name="matrix_versions")
    op.create_index(
        "ix_matrix_versions_in_force",
        "matrix_versions",
        [sa.text("coalesce(effective_from, published_at)"), "published_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_matrix_versions_in_force", table_name="matrix_versions")
    op.create_index("ix_matrix_versions_effective_from", "matrix_versions", ["effective_from"])
