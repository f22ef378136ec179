"""The fleet at a date: the indexes of "the latest decision of each manifest at or before T"
and "the manifests untracked at or before T" (supportgate/fleet/query.py).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

Written by hand to match supportgate/db/tables.py (the drift test compares the two).
`ix_decisions_kind_name_recorded_at_seq` holds every column the fleet's grouping reads, so
PostgreSQL answers it from the index alone; `ix_ledger_entries_type_recorded_at` finds the
few `untracked` entries among the million decision entries.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_decisions_kind_name_recorded_at_seq",
        "decisions",
        ["kind", "name", "recorded_at", "seq"],
    )
    op.create_index("ix_ledger_entries_type_recorded_at", "ledger_entries", ["type", "recorded_at"])


def downgrade() -> None:
    op.drop_index("ix_ledger_entries_type_recorded_at", table_name="ledger_entries")
    op.drop_index("ix_decisions_kind_name_recorded_at_seq", table_name="decisions")
