"""The first schema: manifests, the decision audit, matrix versions, API keys, idempotency.

Revision ID: 0001
Revises:
Create Date: 2026-11-30

Written by hand to match supportgate/db/tables.py (the drift test compares the two). Types are
spelled out here rather than imported, so later edits to the models cannot change what
this revision creates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

VERDICTS = "('supported', 'experimental', 'rejected')"
GENESIS_HASH = "0" * 64


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _big_key() -> sa.types.TypeEngine[int]:
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _time() -> sa.types.TypeEngine[Any]:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "decisions",
        sa.Column("seq", _big_key(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("verdict", sa.String(), nullable=False),
        sa.Column("allowed", sa.Boolean(), nullable=False),
        sa.Column("cause", sa.String(), nullable=False),
        sa.Column("matrix_version", sa.String(), nullable=False),
        sa.Column("policy_revision", sa.String(), nullable=False),
        sa.Column("input_digest", sa.String(), nullable=False),
        sa.Column("evaluated_at", _time(), nullable=False),
        sa.Column("recorded_at", _time(), nullable=False),
        sa.Column("document", _json(), nullable=False),
        sa.Column("policy_input", sa.Text(), nullable=False),
        sa.Column("prev_hash", sa.String(), nullable=False),
        sa.Column("hash", sa.String(), nullable=False),
        sa.UniqueConstraint("id", name="uq_decisions_id"),
        sa.CheckConstraint(f"verdict IN {VERDICTS}", name="ck_decisions_verdict"),
        sa.CheckConstraint(
            "cause IN ('submission', 'hardware', 'matrix', 'policy', 'waiver', 'schedule')",
            name="ck_decisions_cause",
        ),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_decisions_kind_name_seq", "decisions", ["kind", "name", "seq"])
    op.create_index("ix_decisions_verdict_seq", "decisions", ["verdict", "seq"])
    op.create_index("ix_decisions_evaluated_at_seq", "decisions", ["evaluated_at", "seq"])
    op.create_index("ix_decisions_matrix_version_seq", "decisions", ["matrix_version", "seq"])

    op.create_table(
        "decision_rules",
        sa.Column("decision_seq", _big_key(), primary_key=True, nullable=False),
        sa.Column("rule", sa.String(), primary_key=True, nullable=False),
        sa.Column("severity", sa.String(), primary_key=True, nullable=False),
        sa.ForeignKeyConstraint(
            ["decision_seq"], ["decisions.seq"], name="fk_decision_rules_decision_seq"
        ),
        sa.CheckConstraint(
            "severity IN ('deny', 'warn', 'waived')", name="ck_decision_rules_severity"
        ),
    )
    op.create_index(
        "ix_decision_rules_rule_decision_seq", "decision_rules", ["rule", "decision_seq"]
    )

    op.create_table(
        "manifests",
        sa.Column("kind", sa.String(), primary_key=True, nullable=False),
        sa.Column("name", sa.String(), primary_key=True, nullable=False),
        sa.Column("owner", sa.String(), nullable=True),
        sa.Column("content", _json(), nullable=False),
        sa.Column("content_digest", sa.String(), nullable=False),
        sa.Column("hardware_ref", sa.String(), nullable=True),
        sa.Column("latest_decision_id", sa.String(), nullable=True),
        sa.Column("latest_verdict", sa.String(), nullable=True),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("updated_at", _time(), nullable=False),
        sa.Column("last_evaluated_at", _time(), nullable=True),
        sa.ForeignKeyConstraint(
            ["latest_decision_id"], ["decisions.id"], name="fk_manifests_latest_decision_id"
        ),
        sa.CheckConstraint(f"latest_verdict IN {VERDICTS}", name="ck_manifests_latest_verdict"),
    )
    op.create_index("ix_manifests_latest_verdict", "manifests", ["latest_verdict"])
    op.create_index("ix_manifests_hardware_ref", "manifests", ["hardware_ref"])

    audit_head = op.create_table(
        "audit_head",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False, nullable=False),
        sa.Column("last_seq", _big_key(), nullable=False),
        sa.Column("last_hash", sa.String(), nullable=False),
        sa.CheckConstraint("id = 1", name="ck_audit_head_single_row"),
    )
    op.bulk_insert(audit_head, [{"id": 1, "last_seq": 0, "last_hash": GENESIS_HASH}])

    op.create_table(
        "matrix_versions",
        sa.Column("version", sa.String(), primary_key=True, nullable=False),
        sa.Column("document", _json(), nullable=False),
        sa.Column("digest", sa.String(), nullable=False),
        sa.Column("effective_from", _time(), nullable=True),
        sa.Column("published_at", _time(), nullable=False),
        sa.Column("published_by", sa.String(), nullable=True),
    )
    op.create_index("ix_matrix_versions_effective_from", "matrix_versions", ["effective_from"])

    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("key_hash", sa.String(), nullable=False),
        sa.Column("prefix", sa.String(), nullable=False),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("revoked_at", _time(), nullable=True),
        sa.UniqueConstraint("name", name="uq_api_keys_name"),
        sa.UniqueConstraint("key_hash", name="uq_api_keys_key_hash"),
        sa.CheckConstraint("role IN ('ci', 'procurement', 'admin')", name="ck_api_keys_role"),
    )

    op.create_table(
        "idempotency_keys",
        sa.Column("api_key_id", sa.Integer(), primary_key=True, nullable=False),
        sa.Column("key", sa.String(), primary_key=True, nullable=False),
        sa.Column("request_digest", sa.String(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=False),
        sa.Column("response_body", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", _time(), nullable=False),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_keys.id"], name="fk_idempotency_keys_api_key_id"
        ),
    )
    op.create_index("ix_idempotency_keys_created_at", "idempotency_keys", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_idempotency_keys_created_at", table_name="idempotency_keys")
    op.drop_table("idempotency_keys")
    op.drop_table("api_keys")
    op.drop_index("ix_matrix_versions_effective_from", table_name="matrix_versions")
    op.drop_table("matrix_versions")
    op.drop_table("audit_head")
    op.drop_index("ix_manifests_hardware_ref", table_name="manifests")
    op.drop_index("ix_manifests_latest_verdict", table_name="manifests")
    op.drop_table("manifests")
    op.drop_index("ix_decision_rules_rule_decision_seq", table_name="decision_rules")
    op.drop_table("decision_rules")
    op.drop_index("ix_decisions_matrix_version_seq", table_name="decisions")
    op.drop_index("ix_decisions_evaluated_at_seq", table_name="decisions")
    op.drop_index("ix_decisions_verdict_seq", table_name="decisions")
    op.drop_index("ix_decisions_kind_name_seq", table_name="decisions")
    op.drop_table("decisions")
