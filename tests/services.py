"""Real services for tests: finding OPA (tests/opa.py runs it), and PostgreSQL.

Locally a missing service skips its tests with the reason printed; with
SUPPORTGATE_REQUIRE_OPA=1 or SUPPORTGATE_REQUIRE_POSTGRES=1 (set by .ci/run) a missing
OPA or PostgreSQL fails them instead.
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ProgrammingError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from supportgate.db.engine import database_url

POSTGRES_START_TIMEOUT_S = 300.0
START_POSTGRES = Path(__file__).resolve().parents[1] / "scripts" / "start-postgres"


def find_opa() -> str | None:
    found = shutil.which("opa")
    if found:
        return found
    go = shutil.which("go")
    gopath = (
        subprocess.run(
            [go, "env", "GOPATH"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if go
        else ""
    )
    candidate = Path(gopath) / "bin" / "opa" if gopath else None
    return str(candidate) if candidate and candidate.is_file() else None


def require_or_skip(env_flag: str, reason: str) -> None:
    if os.environ.get(env_flag) == "1":
        pytest.fail(f"{reason} ({env_flag}=1 requires it)")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresUnavailableError(RuntimeError):
    """No PostgreSQL server could be had; the message says why."""


def postgres_admin_url() -> str:
    """A URL to a PostgreSQL database as a role that may CREATE DATABASE.

    SUPPORTGATE_TEST_POSTGRES_URL when set; otherwise the local cluster, started (and its
    `supportgate` role created) by scripts/start-postgres. Raises PostgresUnavailableError.
    """
    url = os.environ.get("SUPPORTGATE_TEST_POSTGRES_URL") or _start_local_postgres()
    try:
        engine = create_engine(database_url(url), poolclass=NullPool)
        try:
            with engine.connect() as connection:
                connection.execute(text("SELECT 1"))
        finally:
            engine.dispose()
    except SQLAlchemyError as exc:
        shown = make_url(url).render_as_string(hide_password=True)
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise PostgresUnavailableError(
            f"cannot connect to PostgreSQL at {shown}: {reason}"
        ) from exc
    return url


@contextmanager
def temporary_database(admin_url: str, *, template: str | None = None) -> Iterator[str]:
    """A new database on the server of `admin_url`, empty or a copy of `template` (a name
    from `template_database`); yields its URL, drops it after."""
    name = f"supportgate_test_{uuid.uuid4().hex[:16]}"
    admin = create_engine(database_url(admin_url), poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            copied = f' TEMPLATE "{template}"' if template else ""
            connection.execute(text(f'CREATE DATABASE "{name}"{copied}'))
        try:
            yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
        finally:
            drop_database(admin, name)
    finally:
        admin.dispose()


@contextmanager
def template_database(admin_url: str, prepare: Callable[[str], None]) -> Iterator[str]:
    """A database made once, `prepare`d (given its URL), then closed to connections, so that
    `temporary_database(..., template=name)` copies it (CREATE DATABASE ... TEMPLATE, a file
    copy on the server: far cheaper than preparing each copy). Yields its name; drops it after.
    """
    admin = create_engine(database_url(admin_url), poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with temporary_database(admin_url) as url:
            prepare(url)
            name = make_url(url).database
            assert name is not None
            # No connection may be open on a template while it is copied; closing it to
            # connections also keeps autovacuum (and any stray test) off it meanwhile.
            with admin.connect() as connection:
                connection.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
            yield name
    finally:
        admin.dispose()


def copy_sqlite(source: Path, target: Path) -> str:
    """Copy the SQLite database `source` to `target` (with SQLite's backup, which copies a
    consistent state whatever the WAL file holds); the copy's URL."""
    with closing(sqlite3.connect(source)) as original, closing(sqlite3.connect(target)) as copy:
        original.backup(copy)
    return f"sqlite:///{target}"


def drop_database(admin: Engine, name: str) -> None:
    """Drop `name`, ending its connections. WITH (FORCE) fails when an autovacuum worker is on
    the database (no role of ours owns it); a plain DROP cancels autovacuum itself, once our
    own connections are gone."""
    with admin.connect() as connection:
        try:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        except ProgrammingError:
            connection.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = :name AND usename = current_user"
                    " AND pid <> pg_backend_pid()"
                ),
                {"name": name},
            )
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))


def _start_local_postgres() -> str:
    if not START_POSTGRES.is_file():
        raise PostgresUnavailableError(
            f"SUPPORTGATE_TEST_POSTGRES_URL is unset and {START_POSTGRES} is missing"
        )
    try:
        result = subprocess.run(
            [str(START_POSTGRES), "--no-install"],
            capture_output=True,
            text=True,
            check=False,
            timeout=POSTGRES_START_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PostgresUnavailableError(f"scripts/start-postgres failed: {exc}") from exc
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        detail = result.stderr.strip().splitlines()[-1:] or [f"exit {result.returncode}"]
        raise PostgresUnavailableError(
            f"SUPPORTGATE_TEST_POSTGRES_URL is unset and scripts/start-postgres could not "
            f"start a local PostgreSQL: {detail[0]}"
        )
    return lines[-1]
