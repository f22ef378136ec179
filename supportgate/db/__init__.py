"""Persistence: engines and transactions, the tables, and (in `supportgate.db.migrate`) Alembic."""

from __future__ import annotations

from .engine import create_db_engine, database_url, ping, session_factory, transaction
from .tables import (
    LEDGER_HEAD_ID,
    Alert,
    ApiKey,
    ConsoleSession,
    Decision,
    DecisionRule,
    IdempotencyKey,
    LedgerCheckpoint,
    LedgerEntry,
    LedgerHead,
    LedgerNode,
    Manifest,
    MatrixSourceState,
    MatrixVersion,
    Sweep,
    SweepMemo,
    TrackedSpan,
    Waiver,
    table_of,
)

__all__ = [
    "LEDGER_HEAD_ID",
    "Alert",
    "ApiKey",
    "ConsoleSession",
    "Decision",
    "DecisionRule",
    "IdempotencyKey",
    "LedgerCheckpoint",
    "LedgerEntry",
    "LedgerHead",
    "LedgerNode",
    "Manifest",
    "MatrixSourceState",
    "MatrixVersion",
    "Sweep",
    "SweepMemo",
    "TrackedSpan",
    "Waiver",
    "create_db_engine",
    "database_url",
    "ping",
    "session_factory",
    "table_of",
    "transaction",
]
