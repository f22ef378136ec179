"""Key lifecycle: owners a key may post for, an expiry, and when it was last used.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

Written by hand to match the api_keys section of supportgate/db/tables.py (the drift test
compares the two). Existing keys get no owners (they act for every owner, as before), no
expiry and no last use. `revoked_at` was there from the start.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _time() -> sa.types.TypeEngine[Any]:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column(
        "api_keys",
        sa.Column("owners", _json(), nullable=False, server_default=sa.text("'[]'")),
    )
    op.add_column("api_keys", sa.Column("expires_at", _time(), nullable=True))
    op.add_column("api_keys", sa.Column("last_used_at", _time(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:  # SQLite drops columns by copying
        batch.drop_column("last_used_at")
        batch.drop_column("expires_at")
        batch.drop_column("owners")
