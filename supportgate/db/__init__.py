"""Persistence: engines and transactions, the tables, and (in `supportgate.db.migrate`) Alembic."""

from __future__ import annotations

from .engine import create_db_engine as create_db_engine
from .engine import database_url as database_url
from .engine import ping as ping
from .engine import session_factory as session_factory
from .engine import transaction as transaction
from .tables import LEDGER_HEAD_ID as LEDGER_HEAD_ID
from .tables import Alert as Alert
from .tables import ApiKey as ApiKey
from .tables import ConsoleSession as ConsoleSession
from .tables import Decision as Decision
from .tables import DecisionRule as DecisionRule
from .tables import IdempotencyKey as IdempotencyKey
from .tables import LedgerCheckpoint as LedgerCheckpoint
from .tables import LedgerEntry as LedgerEntry
from .tables import LedgerHead as LedgerHead
from .tables import LedgerNode as LedgerNode
from .tables import Manifest as Manifest
from .tables import MatrixSourceState as MatrixSourceState
from .tables import MatrixVersion as MatrixVersion
from .tables import Sweep as Sweep
from .tables import SweepMemo as SweepMemo
from .tables import TrackedSpan as TrackedSpan
from .tables import Waiver as Waiver
from .tables import table_of as table_of
