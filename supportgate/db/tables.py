"""The supportgate tables. Every index and constraint is named here and in migrations/: a change
here needs a new Alembic revision (tests/db/test_migrations.py fails while they disagree)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    CheckConstraint,
    Column,
    ForeignKeyConstraint,
    Index,
    LargeBinary,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlmodel import Field, SQLModel

from supportgate.manifests.decision import CAUSES, VERDICTS

from .types import BigKey, JSONDocument, UTCDateTime

SEVERITIES = ("deny", "warn", "waived")
ROLES = ("ci", "procurement", "admin")

LEDGER_HEAD_ID = 1
ENTRY_TYPES = ("decision", "matrix", "waiver-created", "waiver-deleted", "untracked")


def _given_key(column_type: Any = BigKey) -> Any:
    """A primary key whose values the writer gives: never numbered by the database."""
    column = Column(column_type, primary_key=True, autoincrement=False, nullable=False)
    return Field(sa_column=column)


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


class Decision(SQLModel, table=True):
    """One evaluation, appended and never changed; `seq` orders the audit history. Its `decision`
    entry at `leaf_index` covers every column but `seq` and `policy_input` (docs/ledger.md)."""

    __tablename__ = "decisions"
    __table_args__ = (
        UniqueConstraint("id", name="uq_decisions_id"),
        UniqueConstraint("leaf_index", name="uq_decisions_leaf_index"),
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
    policy_input: str = Field(sa_type=Text)
    """The exact JSON text the policy engine was given, so the decision can be replayed."""
    leaf_index: int = Field(sa_type=BigKey)


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
    content_digest: str
    hardware_ref: str | None = None
    """A DeploymentManifest's `spec.hardware.ref`: the deployments to re-evaluate (cause
    `hardware`) when that HardwareManifest changes."""
    latest_decision_id: str | None = None
    latest_verdict: str | None = None
    created_at: datetime = Field(sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)
    last_evaluated_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class TrackedSpan(SQLModel, table=True):
    """A time a manifest was tracked with one latest decision (the log's fold, ledger/tracking.py:
    docs/reports.md); the fleet at T is the spans with valid_from <= T < valid_to."""

    __tablename__ = "tracked_spans"
    __table_args__ = (
        Index("ix_tracked_spans_valid", "valid_from", "valid_to", "leaf_index"),
        Index(
            "uq_tracked_spans_open",
            "kind",
            "name",
            unique=True,
            postgresql_where=text("valid_to IS NULL"),
            sqlite_where=text("valid_to IS NULL"),
        ),
    )

    leaf_index: int = _given_key()
    kind: str
    name: str
    decision_id: str
    valid_from: datetime = Field(sa_type=UTCDateTime)
    valid_to: datetime | None = Field(default=None, sa_type=UTCDateTime)
    tracked_since: datetime = Field(sa_type=UTCDateTime)
    """valid_from of the first span since the manifest was last untracked."""
    submitted_at: datetime = Field(sa_type=UTCDateTime)
    """valid_from of the latest span opened by a submission (else tracked_since)."""


class LedgerEntry(SQLModel, table=True):
    """One entry of the verifiable log: the exact canonical JSON hashed into leaf
    `leaf_index` of the Merkle tree (CONTRACT section 6). Appended, never changed."""

    __tablename__ = "ledger_entries"
    __table_args__ = (CheckConstraint(_one_of("type", ENTRY_TYPES), name="ck_ledger_entries_type"),)

    leaf_index: int = _given_key()
    type: str
    entry: str = Field(sa_type=Text)
    recorded_at: datetime = Field(sa_type=UTCDateTime)


class LedgerNode(SQLModel, table=True):
    """The hash of a complete subtree of the log's tree, written once its last leaf is appended
    (docs/ledger.md, "The tree and its node store")."""

    __tablename__ = "ledger_nodes"

    level: int = _given_key(SmallInteger)
    idx: int = _given_key()
    hash: bytes = Field(sa_type=LargeBinary)


class LedgerHead(SQLModel, table=True):
    """Writers lock this one row to append."""

    __tablename__ = "ledger_head"
    __table_args__ = (
        CheckConstraint(f"id = {LEDGER_HEAD_ID:d}", name="ck_ledger_head_single_row"),
    )

    id: int = Field(
        default=LEDGER_HEAD_ID, primary_key=True, sa_column_kwargs={"autoincrement": False}
    )
    size: int = Field(default=0, sa_type=BigKey)
    root: bytes = Field(sa_type=LargeBinary)


class LedgerCheckpoint(SQLModel, table=True):
    """A C2SP signed note, one per tree size signed."""

    __tablename__ = "ledger_checkpoints"

    tree_size: int = _given_key()
    note: str = Field(sa_type=Text)
    signed_at: datetime = Field(sa_type=UTCDateTime)


class MatrixVersion(SQLModel, table=True):
    """Never edited. Its publication is the `matrix` entry at `leaf_index`."""

    __tablename__ = "matrix_versions"
    __table_args__ = (
        # The version in force at T (supportgate/fleet/query.py) is the latest by this
        # expression, so "as of T" is an index read.
        Index(
            "ix_matrix_versions_in_force",
            func.coalesce(text("effective_from"), text("published_at")),
            "published_at",
        ),
        UniqueConstraint("leaf_index", name="uq_matrix_versions_leaf_index"),
    )

    version: str = Field(primary_key=True)
    document: dict[str, Any] = Field(sa_type=JSONDocument)
    digest: str
    effective_from: datetime | None = Field(default=None, sa_type=UTCDateTime)
    published_at: datetime = Field(sa_type=UTCDateTime)
    published_by: str | None = None
    leaf_index: int = Field(sa_type=BigKey)
    provenance: dict[str, Any] | None = Field(default=None, sa_type=JSONDocument)
    """Where a version read from a matrix source came from: `{source, revision, fetched_at}`
    (supportgate/matrix_sources/); None for a version posted to the API or the CLI."""


class MatrixSourceState(SQLModel, table=True):
    """Written only by supportgate/matrix_sources/. One row per source, as the source is
    shown (credentials left out)."""

    __tablename__ = "matrix_source_state"

    source: str = Field(primary_key=True)
    revision: str | None = None
    """The last revision read: a commit, or an ETag (`sha256:<hex>` for an answer without one)."""
    version: str | None = None
    last_sync_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    last_success_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    last_published_version: str | None = None
    last_published_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    error_kind: str | None = None
    """`unreachable`, `invalid` or `conflict`; None after a successful sync."""
    error_message: str | None = Field(default=None, sa_type=Text)
    error_field: str | None = None
    error_revision: str | None = None
    error_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    consecutive_failures: int = 0
    failures_total: int = 0


class ApiKey(SQLModel, table=True):
    """Only the sha256 of its secret is kept. `owners` empty: every owner. `last_used_at` is
    written at most once a minute per key (supportgate/auth)."""

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
    owners: list[str] = Field(
        default_factory=list,
        sa_column=Column(JSONDocument, nullable=False, server_default=text("'[]'")),
    )
    expires_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    last_used_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


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


class ConsoleSession(SQLModel, table=True):
    """A console login (written only by supportgate/console/logins.py), by the sha256 of the
    random id its cookie holds (never the id, never the key)."""

    __tablename__ = "console_sessions"
    __table_args__ = (
        ForeignKeyConstraint(
            ["api_key_id"], ["api_keys.id"], name="fk_console_sessions_api_key_id"
        ),
        Index("ix_console_sessions_api_key_id", "api_key_id"),
    )

    id_hash: str = Field(primary_key=True)
    api_key_id: int
    created_at: datetime = Field(sa_type=UTCDateTime)
    last_seen_at: datetime = Field(sa_type=UTCDateTime)


# --- Webhooks (supportgate/webhooks/) ------------------------------------------------------------

WEBHOOK_STATES = ("active", "disabled")
DELIVERY_STATUSES = ("pending", "delivered", "failed", "cancelled")


class WebhookSubscription(SQLModel, table=True):
    """A URL that receives every alert, signed with its own secret (Standard Webhooks)."""

    __tablename__ = "webhook_subscriptions"
    __table_args__ = (
        CheckConstraint(_one_of("state", WEBHOOK_STATES), name="ck_webhook_subscriptions_state"),
        Index("ix_webhook_subscriptions_created_at", "created_at"),
    )

    id: str = Field(primary_key=True)
    url: str
    description: str | None = None
    secret: str
    """`whsec_<base64>`: kept as it is, since signing needs it; shown once, on creation."""
    state: str
    created_at: datetime = Field(sa_type=UTCDateTime)
    created_by: str | None = None
    consecutive_failures: int = 0
    first_failure_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    """When the current run of consecutive failed attempts began (None: the last succeeded)."""
    disabled_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    disabled_reason: str | None = None


class WebhookDelivery(SQLModel, table=True):
    """The outbox: one alert for one subscription, written in the alert's transaction; the
    dispatcher sends it until it is delivered, given up (`failed`) or `cancelled`."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        ForeignKeyConstraint(
            ["subscription_id"],
            ["webhook_subscriptions.id"],
            name="fk_webhook_deliveries_subscription_id",
        ),
        UniqueConstraint("message_id", name="uq_webhook_deliveries_message_id"),
        UniqueConstraint(
            "subscription_id", "alert_id", name="uq_webhook_deliveries_subscription_id_alert_id"
        ),
        CheckConstraint(_one_of("status", DELIVERY_STATUSES), name="ck_webhook_deliveries_status"),
        Index("ix_webhook_deliveries_status_next_attempt_at", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_subscription_id_seq", "subscription_id", "seq"),
        {"sqlite_autoincrement": True},
    )

    seq: int | None = Field(default=None, sa_column=Column(BigKey, primary_key=True))
    message_id: str
    subscription_id: str
    alert_id: str
    payload: str = Field(sa_type=Text)
    """The exact body sent (and signed) at every attempt."""
    status: str
    attempts: int = 0
    """Attempts claimed so far; also the fencing token of the current claim."""
    next_attempt_at: datetime = Field(sa_type=UTCDateTime)
    """When the next attempt is due; while an attempt is in flight, when its claim expires."""
    created_at: datetime = Field(sa_type=UTCDateTime)
    finished_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    last_status_code: int | None = None
    last_error: str | None = None


class WebhookAttempt(SQLModel, table=True):
    __tablename__ = "webhook_attempts"
    __table_args__ = (
        ForeignKeyConstraint(
            ["delivery_seq"], ["webhook_deliveries.seq"], name="fk_webhook_attempts_delivery_seq"
        ),
    )

    delivery_seq: int = Field(sa_type=BigKey, primary_key=True)
    attempt: int = Field(primary_key=True)
    at: datetime = Field(sa_type=UTCDateTime)
    duration_ms: float
    status_code: int | None = None
    error: str | None = None


# --- Re-evaluation and alerts (supportgate/reevaluation/, supportgate/alerts/; migration 0002) ----

SWEEP_STATUSES = ("queued", "running", "finished", "failed")


class Sweep(SQLModel, table=True):
    """One re-evaluation of the tracked manifests. `trigger` (what asked for it) is unique, so the
    same trigger never sweeps twice; a sweep that dies resumes after `cursor_*` (its last batch)."""

    __tablename__ = "sweeps"
    __table_args__ = (
        UniqueConstraint("trigger", name="uq_sweeps_trigger"),
        CheckConstraint(_one_of("cause", CAUSES), name="ck_sweeps_cause"),
        CheckConstraint(_one_of("status", SWEEP_STATUSES), name="ck_sweeps_status"),
        Index("ix_sweeps_status", "status"),
        Index("ix_sweeps_requested_at", "requested_at"),
    )

    id: str = Field(primary_key=True)
    trigger: str
    cause: str
    status: str
    only: list[list[str]] | None = Field(default=None, sa_type=JSONDocument)
    """Just these [kind, name] (a hardware change's deployments); None: every tracked one."""
    matrix_version: str | None = None
    policy_revision: str | None = None
    cursor_kind: str | None = None
    cursor_name: str | None = None
    evaluated: int = 0
    changed: int = 0
    failed: int = 0
    error: str | None = Field(default=None, sa_type=Text)
    requested_at: datetime = Field(sa_type=UTCDateTime)
    started_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    finished_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class SweepMemo(SQLModel, table=True):
    """What a sweep last found for a tracked manifest (docs/reevaluation.md, "The memo"): the
    digest of all its decision depends on but time, and until when time cannot change it."""

    __tablename__ = "sweep_memos"

    kind: str = Field(primary_key=True)
    name: str = Field(primary_key=True)
    key: str
    stable_until: datetime | None = Field(default=None, sa_type=UTCDateTime)


class Alert(SQLModel, table=True):
    """Written with the decision that made it."""

    __tablename__ = "alerts"
    __table_args__ = (
        UniqueConstraint("id", name="uq_alerts_id"),
        ForeignKeyConstraint(["decision_id"], ["decisions.id"], name="fk_alerts_decision_id"),
        CheckConstraint(_one_of("from_verdict", VERDICTS), name="ck_alerts_from_verdict"),
        CheckConstraint(_one_of("to_verdict", VERDICTS), name="ck_alerts_to_verdict"),
        CheckConstraint(_one_of("cause", CAUSES), name="ck_alerts_cause"),
        Index("ix_alerts_at_seq", "at", "seq"),
        {"sqlite_autoincrement": True},
    )

    seq: int | None = Field(default=None, sa_column=Column(BigKey, primary_key=True))
    id: str
    kind: str
    name: str
    from_verdict: str
    to_verdict: str
    cause: str
    matrix_version: str
    at: datetime = Field(sa_type=UTCDateTime)
    decision_id: str


class Waiver(SQLModel, table=True):
    """Deleting one sets `deleted_at` and keeps the row: decisions name their waiver by id, so
    the audit history must be able to show what was waived, by whom and why."""

    __tablename__ = "waivers"
    __table_args__ = (
        UniqueConstraint("id", name="uq_waivers_id"),
        UniqueConstraint("leaf_index", name="uq_waivers_leaf_index"),
        UniqueConstraint("deleted_leaf_index", name="uq_waivers_deleted_leaf_index"),
        Index("ix_waivers_kind_name", "kind", "name"),
        Index("ix_waivers_expires_at", "expires_at"),
        {"sqlite_autoincrement": True},
    )

    seq: int | None = Field(default=None, sa_column=Column(BigKey, primary_key=True))
    id: str
    rule: str
    kind: str
    name: str
    justification: str = Field(sa_type=Text)
    expires_at: datetime = Field(sa_type=UTCDateTime)
    created_by: str
    created_at: datetime = Field(sa_type=UTCDateTime)
    deleted_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    deleted_by: str | None = None
    leaf_index: int | None = Field(default=None, sa_type=BigKey, nullable=False)
    deleted_leaf_index: int | None = Field(default=None, sa_type=BigKey)


def table_of(model: type[SQLModel]) -> Table:
    """A table model's Table, typed: SQLModel sets `__table__` on the class without declaring it."""
    return model.__table__  # type: ignore[attr-defined,no-any-return]
