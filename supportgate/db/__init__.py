"""Persistence: engines and transactions, the tables, and (in `supportgate.db.migrate`) Alembic."""

from __future__ import annotations

from .audit_head import lock_audit_head
from .engine import create_db_engine, database_url, ping, session_factory, transaction
from .tables import (
    AUDIT_GENESIS_HASH,
    AUDIT_HEAD_ID,
    Alert,
    ApiKey,
    AuditHead,
    Decision,
    DecisionRule,
    IdempotencyKey,
    Manifest,
    MatrixVersion,
    Sweep,
    SweepMemo,
    Waiver,
)

__all__ = [
    "AUDIT_GENESIS_HASH",
    "AUDIT_HEAD_ID",
    "Alert",
    "ApiKey",
    "AuditHead",
    "Decision",
    "DecisionRule",
    "IdempotencyKey",
    "Manifest",
    "MatrixVersion",
    "Sweep",
    "SweepMemo",
    "Waiver",
    "create_db_engine",
    "database_url",
    "lock_audit_head",
    "ping",
    "session_factory",
    "transaction",
]
