"""The supportgate tables. Every index and constraint is named here and in migrations/.

Times are aware UTC datetimes (`UTCDateTime`); documents are JSON (`jsonb` on PostgreSQL).
A change here needs a new Alembic revision: tests/integration/test_migrations.py fails
while the migrations and these tables disagree.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    CheckConstraint,
    Column,
    ForeignKeyConstraint,
    Index,
    LargeBinary,
    Text,
    UniqueConstraint,
)
from sqlmodel import Field, SQLModel

from service.manifests.decision import CAUSES, VERDICTS

from .types import BigKey, JSONDocument, UTCDateTime

SEVERITIES = ("deny", "warn", "waived")
ROLES = ("ci", "procurement", "admin")

AUDIT_HEAD_ID = 1
AUDIT_GENESIS_HASH = "0" * 64  # the prev_hash of the first decision


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


class Decision(SQLModel, table=True):
    """One evaluation, appended and never changed; `seq` orders the audit and its hash chain."""

    __tablename__ = "decisions"
    __table_args__ = (
        UniqueConstraint("id", name="uq_decisions_id"),
        CheckConstraint(_one_of("verdict", VERDICTS), name="ck_decisions_verdict"),
        CheckConstraint(_one_of("cause", CAUSES), name="ck_decisions_cause"),
        Index("ix_decisions_kind_name_seq", "kind", "name", "seq"),
        Index("ix_decisions_verdict_seq", "verdict", "seq"),
        Index("ix_decisions_evaluated_at_seq", "evaluated_at", "seq"),
        Index("ix_decisions_matrix_version_seq", "matrix_version", "seq"),
        {"sqlite_autoincrement": True},  # a seq is never reused, even after a rollback
    )

    seq: int | None = Field(default=None, sa_column=Column(BigKey, primary_key=True))
    id: str
    kind: str
    name: str
    verdict: str
    allowed: bool
    cause: str
    matrix_version: str
    policy_revision: str
    input_digest: str
    evaluated_at: datetime = Field(sa_type=UTCDateTime)
    recorded_at: datetime = Field(sa_type=UTCDateTime)
    document: dict[str, Any] = Field(sa_type=JSONDocument)
    """violations, claims, checklist and recommendations, as in the decision body."""
    policy_input: str = Field(sa_type=Text)
    """The exact JSON text the policy engine was given, so the decision can be replayed."""
    prev_hash: str
    hash: str


class DecisionRule(SQLModel, table=True):
    """The rules a decision's violations name, one row per (rule, severity): audit `?rule=`."""

    __tablename__ = "decision_rules"
    __table_args__ = (
        ForeignKeyConstraint(
            ["decision_seq"], ["decisions.seq"], name="fk_decision_rules_decision_seq"
        ),
        CheckConstraint(_one_of("severity", SEVERITIES), name="ck_decision_rules_severity"),
        Index("ix_decision_rules_rule_decision_seq", "rule", "decision_seq"),
    )

    decision_seq: int = Field(sa_type=BigKey, primary_key=True)
    rule: str = Field(primary_key=True)
    severity: str = Field(primary_key=True)


class Manifest(SQLModel, table=True):
    """A tracked manifest: the latest content posted for (kind, name) and its latest verdict."""

    __tablename__ = "manifests"
    __table_args__ = (
        ForeignKeyConstraint(
            ["latest_decision_id"], ["decisions.id"], name="fk_manifests_latest_decision_id"
        ),
        CheckConstraint(_one_of("latest_verdict", VERDICTS), name="ck_manifests_latest_verdict"),
        Index("ix_manifests_latest_verdict", "latest_verdict"),
        Index("ix_manifests_hardware_ref", "hardware_ref"),
    )

    kind: str = Field(primary_key=True)
    name: str = Field(primary_key=True)
    owner: str | None = None
    content: dict[str, Any] = Field(sa_type=JSONDocument)
    """The canonical manifest."""
    content_digest: str
    hardware_ref: str | None = None
    """A DeploymentManifest's `spec.hardware.ref`: the deployments to re-evaluate (cause
    `hardware`) when that HardwareManifest changes."""
    latest_decision_id: str | None = None
    latest_verdict: str | None = None
    created_at: datetime = Field(sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)
    last_evaluated_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class AuditHead(SQLModel, table=True):
    """The one row (id 1) at the end of the hash chain; writers lock it to append."""

    __tablename__ = "audit_head"
    __table_args__ = (CheckConstraint(f"id = {AUDIT_HEAD_ID:d}", name="ck_audit_head_single_row"),)

    id: int = Field(
        default=AUDIT_HEAD_ID, primary_key=True, sa_column_kwargs={"autoincrement": False}
    )
    last_seq: int = Field(default=0, sa_type=BigKey)
    last_hash: str = AUDIT_GENESIS_HASH


class MatrixVersion(SQLModel, table=True):
    """A published support matrix; never edited, superseded by a newer version."""

    __tablename__ = "matrix_versions"
    __table_args__ = (Index("ix_matrix_versions_effective_from", "effective_from"),)

    version: str = Field(primary_key=True)
    document: dict[str, Any] = Field(sa_type=JSONDocument)
    digest: str
    effective_from: datetime | None = Field(default=None, sa_type=UTCDateTime)
    published_at: datetime = Field(sa_type=UTCDateTime)
    published_by: str | None = None


class ApiKey(SQLModel, table=True):
    """An API key: only the sha256 of its secret is kept, and a prefix to recognise it by."""

    __tablename__ = "api_keys"
    __table_args__ = (
        UniqueConstraint("name", name="uq_api_keys_name"),
        UniqueConstraint("key_hash", name="uq_api_keys_key_hash"),
        CheckConstraint(_one_of("role", ROLES), name="ck_api_keys_role"),
    )

    id: int | None = Field(default=None, primary_key=True)
    name: str
    role: str
    key_hash: str
    prefix: str
    created_at: datetime = Field(sa_type=UTCDateTime)
    revoked_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class IdempotencyKey(SQLModel, table=True):
    """The first response to an `Idempotency-Key`, replayed for a repeat of the same request."""

    __tablename__ = "idempotency_keys"
    __table_args__ = (
        ForeignKeyConstraint(
            ["api_key_id"], ["api_keys.id"], name="fk_idempotency_keys_api_key_id"
        ),
        Index("ix_idempotency_keys_created_at", "created_at"),
    )

    api_key_id: int = Field(primary_key=True)
    key: str = Field(primary_key=True)
    request_digest: str
    status_code: int
    response_body: bytes = Field(sa_type=LargeBinary)
    created_at: datetime = Field(sa_type=UTCDateTime)
