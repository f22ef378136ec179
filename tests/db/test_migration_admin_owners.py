"""Migration 0010 on SQLite and PostgreSQL (CONTRACT 11.3): owners belong to ci and
procurement keys only, so the admin keys of an older database lose theirs, and the migration
names each key it changed. Other keys keep their owners; downgrading and upgrading again holds."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlalchemy import text
from structlog.testing import capture_logs

from supportgate.db import create_db_engine
from supportgate.db.migrate import downgrade, upgrade

AT = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
KEYS = {
    "research-admin": ("admin", ["research"]),
    "root": ("admin", []),
    "infra-ci": ("ci", ["infra"]),
    "audit": ("procurement", ["infra", "research"]),
}


def _owners(url: str) -> dict[str, list[str]]:
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT name, owners FROM api_keys"))
            return {
                name: json.loads(owners) if isinstance(owners, str) else owners
                for name, owners in rows
            }
    finally:
        engine.dispose()


def test_admin_keys_lose_their_owners_and_the_migration_says_which(db_url: str) -> None:
    upgrade(db_url, "0009")
    engine = create_db_engine(db_url)
    try:
        with engine.begin() as connection:
            for index, (name, (role, owners)) in enumerate(KEYS.items()):
                connection.execute(
                    text(
                        "INSERT INTO api_keys (name, role, key_hash, prefix, created_at, owners) "
                        "VALUES (:name, :role, :hash, 'sg_x', :at, :owners)"
                    ),
                    {"name": name, "role": role, "hash": f"{index:064x}", "at": AT}
                    | {"owners": json.dumps(owners)},
                )
    finally:
        engine.dispose()

    with capture_logs() as logs:
        upgrade(db_url, "0010")

    expected = {"research-admin": [], "root": [], "infra-ci": ["infra"]}
    expected["audit"] = ["infra", "research"]
    assert _owners(db_url) == expected
    (event,) = [log for log in logs if log["event"] == "admin_key_owners_dropped"]
    assert event["keys"] == {"research-admin": ["research"]}
    assert event["log_level"] == "warning"

    downgrade(db_url, "0009")
    assert _owners(db_url) == expected  # what was dropped is not made up again
    with capture_logs() as logs:
        upgrade(db_url, "head")
    assert _owners(db_url) == expected
    assert not [log for log in logs if log["event"] == "admin_key_owners_dropped"]
