"""Webhooks: subscriptions, the delivery outbox and the delivery log.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30

Written by hand to match the webhooks section of supportgate/db/tables.py (the drift test
compares the two); types are spelled out here, as in 0001.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _big_key() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _time() -> sa.types.TypeEngine[Any]:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "webhook_subscriptions",
        sa.Column("id", sa.String(), primary_key=True, nullable=False),
        sa.Column("url", sa.String(), nullable=False),
        sa.Column("description", sa.String(), nullable=True),
        sa.Column("secret", sa.String(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("created_by", sa.String(), nullable=True),
        sa.Column("consecutive_failures", sa.Integer(), nullable=False),
        sa.Column("first_failure_at", _time(), nullable=True),
        sa.Column("disabled_at", _time(), nullable=True),
        sa.Column("disabled_reason", sa.String(), nullable=True),
        sa.CheckConstraint(
            "state IN ('active', 'disabled')", name="ck_webhook_subscriptions_state"
        ),
    )
    op.create_index("ix_webhook_subscriptions_created_at", "webhook_subscriptions", ["created_at"])

    op.create_table(
        "webhook_deliveries",
        sa.Column("seq", _big_key(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("message_id", sa.String(), nullable=False),
        sa.Column("subscription_id", sa.String(), nullable=False),
        sa.Column("alert_id", sa.String(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _time(), nullable=False),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("finished_at", _time(), nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(
            ["subscription_id"],
            ["webhook_subscriptions.id"],
            name="fk_webhook_deliveries_subscription_id",
        ),
        sa.UniqueConstraint("message_id", name="uq_webhook_deliveries_message_id"),
        sa.UniqueConstraint(
            "subscription_id", "alert_id", name="uq_webhook_deliveries_subscription_id_alert_id"
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'delivered', 'failed', 'cancelled')",
            name="ck_webhook_deliveries_status",
        ),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_webhook_deliveries_status_next_attempt_at",
        "webhook_deliveries",
        ["status", "next_attempt_at"],
    )
    op.create_index(
        "ix_webhook_deliveries_subscription_id_seq",
        "webhook_deliveries",
        ["subscription_id", "seq"],
    )

    op.create_table(
        "webhook_attempts",
        sa.Column("delivery_seq", _big_key(), primary_key=True, nullable=False),
        sa.Column("attempt", sa.Integer(), primary_key=True, nullable=False),
        sa.Column("at", _time(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(
            ["delivery_seq"], ["webhook_deliveries.seq"], name="fk_webhook_attempts_delivery_seq"
        ),
    )


def downgrade() -> None:
    op.drop_table("webhook_attempts")
    op.drop_index("ix_webhook_deliveries_subscription_id_seq", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_status_next_attempt_at", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_index("ix_webhook_subscriptions_created_at", table_name="webhook_subscriptions")
    op.drop_table("webhook_subscriptions")
