"""Alembic on SQLite and PostgreSQL: up, down, up again; no drift; the startup schema check."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlmodel import SQLModel

from supportgate.db import create_db_engine
from supportgate.db.migrate import (
    MIGRATIONS_DIR,
    current_revision,
    downgrade,
    ensure_current,
    head_revision,
    upgrade,
)
from supportgate.errors import DatabaseError, SchemaOutdated

REPO = Path(__file__).resolve().parents[2]
ALEMBIC = (sys.executable, "-m", "alembic", "-c", str(REPO / "alembic.ini"))
TABLES = {
    "alerts",
    "api_keys",
    "console_sessions",
    "decision_rules",
    "decisions",
    "idempotency_keys",
    "ledger_checkpoints",
    "ledger_entries",
    "ledger_head",
    "ledger_nodes",
    "manifests",
    "matrix_source_state",
    "matrix_versions",
    "sweep_memos",
    "sweeps",
    "tracked_spans",
    "waivers",
    "webhook_attempts",
    "webhook_deliveries",
    "webhook_subscriptions",
}


def _tables(url: str) -> set[str]:
    engine = create_db_engine(url)
    try:
        return set(inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def _drift(url: str) -> list[object]:
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"compare_type": True, "compare_server_default": True}
            )
            with warnings.catch_warnings():
                # SQLite's reflection skips expression indexes; PostgreSQL's compares them.
                warnings.filterwarnings("ignore", ".*expression-based index")
                return list(compare_metadata(context, SQLModel.metadata))
    finally:
        engine.dispose()


def test_upgrade_downgrade_upgrade_leaves_every_table(db_url: str) -> None:
    upgrade(db_url)
    assert _tables(db_url) == TABLES
    assert current_revision(db_url) == head_revision()

    downgrade(db_url, "base")
    assert _tables(db_url) == set()
    assert current_revision(db_url) is None

    upgrade(db_url)
    assert _tables(db_url) == TABLES
    assert current_revision(db_url) == head_revision()


def test_tables_match_migrations(migrated_db_url: str) -> None:
    assert _drift(migrated_db_url) == []


def test_upgrade_seeds_the_ledger_head(migrated_db_url: str) -> None:
    engine = create_db_engine(migrated_db_url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT id, size, root FROM ledger_head"))
            assert [tuple(row) for row in rows] == [(1, 0, hashlib.sha256(b"").digest())]
    finally:
        engine.dispose()


def test_ensure_current_names_the_command_until_upgraded(db_url: str) -> None:
    with pytest.raises(SchemaOutdated) as raised:
        ensure_current(db_url)
    message = str(raised.value)
    assert "the database schema is at base" in message
    assert f"this supportgate needs {head_revision()}" in message
    assert message.endswith("run `supportgate db upgrade`")
    assert isinstance(raised.value, DatabaseError)

    upgrade(db_url)
    ensure_current(db_url)


def test_ensure_current_accepts_an_engine(migrated_db_url: str) -> None:
    engine = create_db_engine(migrated_db_url)
    try:
        ensure_current(engine)
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_ensure_current_refuses_a_newer_schema(migrated_db_url: str) -> None:
    engine = create_db_engine(migrated_db_url)
    try:
        with engine.begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = 'zz_future'"))
        with pytest.raises(SchemaOutdated, match="a newer supportgate migrated it"):
            ensure_current(engine)
    finally:
        engine.dispose()


def test_migrations_are_found_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert MIGRATIONS_DIR == REPO / "migrations"
    assert head_revision() == "0012"
    upgrade("sqlite:///relative.db")
    assert current_revision(f"sqlite:///{tmp_path / 'relative.db'}") == head_revision()


def test_alembic_command_line_reads_the_url_from_the_environment(tmp_path: Path) -> None:
    """`alembic upgrade head` from the repository root, URL from SUPPORTGATE_DATABASE_URL."""
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    env = {**os.environ, "SUPPORTGATE_DATABASE_URL": url}
    result = subprocess.run(
        [*ALEMBIC, "upgrade", "head"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert current_revision(url) == head_revision()
    assert _tables(url) == TABLES


def test_offline_sql_renders_for_both_dialects(tmp_path: Path) -> None:
    """PostgreSQL renders to head. SQLite renders to 0004: 0005 alters columns, which SQLite
    does only by copying the table, and Alembic needs the live table to copy (SQLite
    databases are upgraded online, by `supportgate db upgrade`)."""
    for url, target in (
        ("sqlite:///offline.db", "0004"),
        ("postgresql://user@localhost/supportgate", "head"),
    ):
        result = subprocess.run(
            [*ALEMBIC, "-x", f"url={url}", "upgrade", target, "--sql"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert "CREATE TABLE decisions" in result.stdout
        assert "CREATE INDEX ix_decision_rules_rule_decision_seq" in result.stdout
    assert "CREATE TABLE ledger_entries" in result.stdout
    assert "INSERT INTO ledger_head (id, size, root) VALUES (1, 0, '\\xe3b0c442" in result.stdout
    assert not (tmp_path / "offline.db").exists()
