"""Alembic, run from Python. The migrations (`migrations/`) install as the package data
`supportgate.migrations`, so a wheel and an editable checkout alike find them without
alembic.ini or a working directory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, inspect
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlmodel import SQLModel

from supportgate.errors import DatabaseError, SchemaOutdated
from supportgate.package_data import MIGRATIONS_PACKAGE, package_directory

from . import tables as _tables  # noqa: F401 - registers the tables on SQLModel.metadata
from .engine import as_database_error, create_db_engine

MIGRATIONS_DIR = package_directory(MIGRATIONS_PACKAGE)
UPGRADE_COMMAND = "supportgate db upgrade"


def alembic_config(url: str | None = None) -> Config:
    if not (MIGRATIONS_DIR / "env.py").is_file():
        raise DatabaseError(f"the migrations are missing: no {MIGRATIONS_DIR / 'env.py'}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        config.attributes["database_url"] = url
    return config


def upgrade(url: str, revision: str = "head") -> None:
    _run(url, lambda config: command.upgrade(config, revision))


def downgrade(url: str, revision: str) -> None:
    """`base`: no tables."""
    _run(url, lambda config: command.downgrade(config, revision))


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise DatabaseError(f"no migrations found in {MIGRATIONS_DIR}")
    return head


def current_revision(target: str | Engine) -> str | None:
    """The revision the database is at; None for a database Alembic never touched."""
    engine = create_db_engine(target) if isinstance(target, str) else target
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    except OperationalError as exc:
        raise as_database_error(engine.url, exc) from exc
    finally:
        if isinstance(target, str):
            engine.dispose()


def ensure_current(target: str | Engine) -> None:
    """SchemaOutdated names the fix."""
    needed = head_revision()
    current = current_revision(target)
    if current == needed:
        return
    script = ScriptDirectory.from_config(alembic_config())
    known = {rev.revision for rev in script.walk_revisions()}
    if current is not None and current not in known:
        raise SchemaOutdated(
            f"the database schema is at {current}, which this supportgate (at {needed}) does "
            "not know: a newer supportgate migrated it; run that version, or a newer one"
        )
    shown = current if current is not None else "base (no supportgate tables)"
    raise SchemaOutdated(
        f"the database schema is at {shown}, this supportgate needs {needed}: "
        f"run `{UPGRADE_COMMAND}`"
    )


def check_schema(engine: Engine) -> None:
    """Raise DatabaseError naming the tables of supportgate's schema the database lacks (the
    readiness check: a table renamed or dropped away fails every request that needs it)."""
    try:
        with engine.connect() as connection:
            present = set(inspect(connection).get_table_names())
    except DBAPIError as exc:
        raise as_database_error(engine.url, exc) from exc
    missing = sorted(set(SQLModel.metadata.tables) - present)
    if missing:
        raise DatabaseError(
            f"the database lacks supportgate's tables {', '.join(missing)}: restore them, or "
            f"run `{UPGRADE_COMMAND}` on a database it has not migrated"
        )


MIGRATION_LOCK = 0x5347_4D49_4752  # "SGMIGR": the advisory lock key of schema migrations


@contextmanager
def migration_connection(engine: Engine) -> Iterator[Connection]:
    """On SQLite, foreign keys are off meanwhile (batch mode copies and drops tables that
    others reference; the pragma cannot change inside a transaction) and checked before
    commit. On PostgreSQL an advisory lock makes replicas that start together migrate one
    after the other (SQLite's write lock does so there): the later ones find nothing to do.
    """
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            _sqlite_pragma(connection, "foreign_keys=OFF")
        try:
            with connection.begin():
                if connection.dialect.name == "postgresql":
                    connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
                yield connection
                if sqlite:
                    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise DatabaseError(f"a migration broke foreign keys: {broken[:5]}")
        finally:
            if sqlite:
                _sqlite_pragma(connection, "foreign_keys=ON")


def _sqlite_pragma(connection: Connection, pragma: str) -> None:
    connection.connection.driver_connection.execute(f"PRAGMA {pragma}")  # type: ignore[union-attr]


def _run(url: str, run: Callable[[Config], None]) -> None:
    config = alembic_config(url)
    engine = create_db_engine(url)
    try:
        with migration_connection(engine) as connection:
            config.attributes["connection"] = connection
            run(config)
    except OperationalError as exc:
        raise as_database_error(engine.url, exc) from exc
    finally:
        engine.dispose()
