"""Console sessions: the cookie holds a random session id, kept here only as its sha256.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

Written by hand to match the console_sessions table of supportgate/db/tables.py (the drift
test compares the two). Its only writer is supportgate/console/logins.py. Nothing to carry
over: the cookies of before held the API key itself and are no session; their holders log in
again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _time() -> sa.types.TypeEngine[Any]:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "console_sessions",
        sa.Column("id_hash", sa.String(), primary_key=True, nullable=False),
        sa.Column("api_key_id", sa.Integer(), nullable=False),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("last_seen_at", _time(), nullable=False),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_keys.id"], name="fk_console_sessions_api_key_id"
        ),
    )
    op.create_index("ix_console_sessions_api_key_id", "console_sessions", ["api_key_id"])


def downgrade() -> None:
    op.drop_index("ix_console_sessions_api_key_id", table_name="console_sessions")
    op.drop_table("console_sessions")
