"""Engines, sessions and transactions for SQLite and PostgreSQL (psycopg 3). On SQLite,
SQLAlchemy, not the sqlite3 module, emits BEGIN, so a transaction's reads and writes share one
snapshot, and BEGIN IMMEDIATE (`write=True`) makes concurrent writers queue for the write lock
instead of failing half way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import Connection, Engine, Table, create_engine, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.orm import sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool
from sqlmodel import Session

from supportgate.config import DatabaseTimeouts
from supportgate.errors import DatabaseBusy, DatabaseError, UsageError

SQLITE_BUSY_TIMEOUT_MS = 5000
# Sized for a 2-core host serving 64 concurrent requests: 10 kept, up to 30 at a peak;
# a request waits up to POOL_TIMEOUT_S for a connection rather than overloading the server.
POOL_SIZE = 10
MAX_OVERFLOW = 20
POOL_TIMEOUT_S = 30
POOL_RECYCLE_S = 1800
POSTGRES_CONNECT_TIMEOUT_S = 10

_WRITE_OPTION = "supportgate_write"
_TIMEOUT_SQLSTATES = {"55P03": "lock_timeout", "57014": "statement_timeout"}
_POSTGRES_DRIVERS = {"postgres", "postgresql"}
_SQLITE_MEMORY = {"", ":memory:"}


def database_url(url: str) -> URL:
    """The URL as supportgate connects to it: psycopg 3 for PostgreSQL, absolute SQLite paths."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise UsageError(
            f"database URL {url!r} is not a SQLAlchemy URL: {exc}", field="SUPPORTGATE_DATABASE_URL"
        ) from exc
    if parsed.drivername in _POSTGRES_DRIVERS:
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() == "sqlite" and not _sqlite_in_memory(parsed):
        parsed = _absolute_sqlite(parsed)
    return parsed


@dataclass(frozen=True, slots=True)
class AbsentDatabase:
    """A connection would create it empty."""

    url: str
    """The URL, with the file's absolute path; an in-memory one as it was given (SQLAlchemy
    would render `sqlite:///:memory:` as `sqlite:///%3Amemory%3A`)."""
    in_memory: bool
    """One process's own, gone when it ends. Else a missing file."""


def absent_sqlite_database(url: str) -> AbsentDatabase | None:
    """None when the file exists, and for PostgreSQL and `file:` URIs (taken as written)."""
    parsed = database_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    if _sqlite_in_memory(parsed):
        return AbsentDatabase(url, in_memory=True)
    database = parsed.database or ""
    if database.startswith("file:") or Path(database).exists():
        return None
    return AbsentDatabase(parsed.render_as_string(), in_memory=False)


def create_db_engine(url: str, timeouts: DatabaseTimeouts | None = None) -> Engine:
    """`timeouts` bound every statement on PostgreSQL (SQLite has its busy timeout)."""
    parsed = database_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(parsed)
    if backend == "postgresql":
        return _postgres_engine(parsed, timeouts or DatabaseTimeouts(statement=0, lock=0))
    raise UsageError(
        f"database URL {parsed.render_as_string()} names {backend!r}: "
        "supportgate runs on SQLite and PostgreSQL",
        field="SUPPORTGATE_DATABASE_URL",
    )


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions whose loaded objects stay readable after commit (no lazy reload)."""
    return sessionmaker(bind=engine, class_=Session, expire_on_commit=False)


@contextmanager
def transaction(factory: sessionmaker[Session], *, write: bool = False) -> Iterator[Session]:
    """`write=True`: the block writes after reading (the audit head, an upsert), so SQLite takes
    the write lock at BEGIN; PostgreSQL ignores it (lock rows there with SELECT ... FOR UPDATE)."""
    with factory() as session, session.begin():
        if write:
            session.connection(execution_options={_WRITE_OPTION: True})
        yield session


def conflict_insert(session: Session, table: Table) -> Any:
    """An INSERT into `table` that can say ON CONFLICT: the session's dialect's own."""
    dialect = session.get_bind().dialect.name
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table)


def ping(engine: Engine) -> None:
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql("SELECT 1")
    except DBAPIError as exc:
        raise as_database_error(engine.url, exc) from exc


def as_database_error(url: URL, exc: DBAPIError) -> DatabaseError:
    """The DatabaseError for a driver error: the URL without its password, the first line."""
    reason = str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else type(exc).__name__
    return DatabaseError(f"the database at {url.render_as_string()} cannot be used: {reason}")


def busy_error(exc: DBAPIError) -> DatabaseBusy | None:
    """None for any driver error but a cancel at lock_timeout or statement_timeout."""
    setting = _TIMEOUT_SQLSTATES.get(getattr(exc.orig, "sqlstate", None) or "")
    if setting is None:
        return None
    waited = "a lock another transaction holds" if setting == "lock_timeout" else "a statement"
    return DatabaseBusy(f"the database is busy: it stopped waiting for {waited} ({setting})")


def _milliseconds(seconds: float) -> int:
    """PostgreSQL's unit for its timeouts; a positive bound stays at least 1 ms (0 is none)."""
    return max(1, round(seconds * 1000)) if seconds > 0 else 0


def _sqlite_in_memory(url: URL) -> bool:
    return (url.database or "") in _SQLITE_MEMORY or "mode=memory" in (url.database or "")


def _absolute_sqlite(url: URL) -> URL:
    database = url.database or ""
    if database.startswith("file:"):  # a URI (`?uri=true`): taken as written
        return url
    path = Path(database).expanduser()
    return url.set(database=str(path if path.is_absolute() else Path.cwd() / path))


def json_text(value: Any) -> str:
    return msgspec.json.encode(value).decode()


# JSON columns are written and read with msgspec: several times faster than the json module on
# the decision documents every request stores, and the same JSON.
_POOL: dict[str, Any] = {
    "pool_size": POOL_SIZE,
    "max_overflow": MAX_OVERFLOW,
    "pool_timeout": POOL_TIMEOUT_S,
}
_JSON_CODEC: dict[str, Any] = {
    "json_serializer": json_text,
    "json_deserializer": msgspec.json.decode,
}


def _sqlite_engine(url: URL) -> Engine:
    connect_args: dict[str, Any] = {
        "check_same_thread": False,
        "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000,
    }
    # In memory: one shared connection, or every checkout would see its own empty database.
    pool = {"poolclass": StaticPool} if _sqlite_in_memory(url) else _POOL
    engine = create_engine(url, connect_args=connect_args, **pool, **_JSON_CODEC)
    event.listen(engine, "connect", _on_sqlite_connect)
    event.listen(engine, "begin", _on_sqlite_begin)
    return engine


def _on_sqlite_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN (see _on_sqlite_begin)
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")  # synchronous stays FULL: the audit is durable
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS:d}")
    finally:
        cursor.close()


def _on_sqlite_begin(connection: Connection) -> None:
    write = connection.get_execution_options().get(_WRITE_OPTION, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _postgres_engine(url: URL, timeouts: DatabaseTimeouts) -> Engine:
    options = "-c timezone=UTC"
    options += f" -c statement_timeout={_milliseconds(timeouts.statement)}"
    options += f" -c lock_timeout={_milliseconds(timeouts.lock)}"
    defaults: dict[str, Any] = {
        "application_name": "supportgate",
        "connect_timeout": POSTGRES_CONNECT_TIMEOUT_S,
        "options": options,
    }
    connect_args = {key: value for key, value in defaults.items() if key not in url.query}
    return create_engine(
        url,
        connect_args=connect_args,
        pool_recycle=POOL_RECYCLE_S,
        pool_pre_ping=True,
        **_POOL,
        **_JSON_CODEC,
    )
