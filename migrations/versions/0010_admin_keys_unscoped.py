"""Admin keys act for every owner: owners are dropped from the admin keys that have them.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-05

An owner-scoped admin key escaped its owners (issue 22): an admin mints keys, untracks,
revokes and waives for everyone. CONTRACT 11.3 keeps owners to ci and procurement keys, so
each admin key that had owners now acts for every owner, and the migration logs which keys
they were and what they held (`admin_key_owners_dropped`): an operator who meant a scope
makes a ci or procurement key with those owners instead. The schema does not change.
Downgrading changes nothing: the owners are gone, and an admin key without owners was
valid before too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op

from supportgate.logging import get_logger

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = get_logger("supportgate.migrations")


def upgrade() -> None:
    if not context.is_offline_mode():  # offline SQL has no rows to name
        rows = op.get_bind().execute(
            sa.text("SELECT name, owners FROM api_keys WHERE role = 'admin' ORDER BY name")
        )
        stored = {name: json.loads(o) if isinstance(o, str) else o for name, o in rows}
        scoped = {name: owners for name, owners in stored.items() if owners}
        if scoped:
            log.warning(
                "admin_key_owners_dropped",
                keys=scoped,
                note="an admin key acts for every owner; for a scope, make a ci or "
                "procurement key with these owners",
            )
    op.execute("UPDATE api_keys SET owners = '[]' WHERE role = 'admin'")


def downgrade() -> None:
    pass
