"""Engines: URLs, SQLite pragmas, pools, and write transactions that queue instead of failing."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import QueuePool, StaticPool, text
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import create_db_engine, database_url, ping, session_factory, transaction
from supportgate.db.engine import MAX_OVERFLOW, POOL_SIZE, SQLITE_BUSY_TIMEOUT_MS
from supportgate.db.migrate import current_revision, upgrade
from supportgate.errors import DatabaseError, UsageError


@pytest.mark.parametrize(
    ("given", "driver"),
    [
        ("postgresql://u:p@db/supportgate", "postgresql+psycopg"),
        ("postgres://u:p@db/supportgate", "postgresql+psycopg"),
        ("postgresql+psycopg://u:p@db/supportgate", "postgresql+psycopg"),
        ("sqlite:////var/lib/supportgate.db", "sqlite"),
    ],
)
def test_urls_use_psycopg_3(given: str, driver: str) -> None:
    assert database_url(given).drivername == driver


def test_relative_sqlite_paths_resolve_against_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    engine = create_db_engine("sqlite:///supportgate.db")
    try:
        assert engine.url.database == str(tmp_path / "supportgate.db")
        monkeypatch.chdir(tmp_path.parent)  # a later chdir does not move the database
        with engine.connect() as connection:
            connection.execute(text("CREATE TABLE t (x INTEGER)"))
            connection.commit()
        assert (tmp_path / "supportgate.db").is_file()
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    "url", ["mysql://u:p@db/supportgate", "not a url", "oracle+oracledb://u@db/x"]
)
def test_other_databases_are_refused(url: str) -> None:
    with pytest.raises(UsageError):
        create_db_engine(url)


def test_passwords_stay_out_of_errors() -> None:
    with pytest.raises(UsageError) as raised:
        create_db_engine("mysql://user:hunter2@db/supportgate")
    assert "hunter2" not in str(raised.value)


def test_sqlite_pragmas(tmp_path: Path) -> None:
    engine = create_db_engine(f"sqlite:///{tmp_path / 'p.db'}")
    try:
        with engine.connect() as connection:
            pragmas = {
                name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()
                for name in ("journal_mode", "foreign_keys", "busy_timeout")
            }
        assert pragmas == {
            "journal_mode": "wal",
            "foreign_keys": 1,
            "busy_timeout": SQLITE_BUSY_TIMEOUT_MS,
        }
        assert isinstance(engine.pool, QueuePool)
        assert engine.pool.size() == POOL_SIZE
    finally:
        engine.dispose()


def test_postgres_pool_is_sized_for_many_requests() -> None:
    engine = create_db_engine("postgresql://u:p@127.0.0.1:1/none")  # never connected
    try:
        assert isinstance(engine.pool, QueuePool)
        assert engine.pool.size() == POOL_SIZE
        assert engine.pool._max_overflow == MAX_OVERFLOW
        assert engine.pool._pre_ping
    finally:
        engine.dispose()


def test_in_memory_sqlite_is_one_database() -> None:
    engine = create_db_engine("sqlite://")
    try:
        assert isinstance(engine.pool, StaticPool)
        with transaction(session_factory(engine)) as session:
            session.execute(text("CREATE TABLE t (x INTEGER)"))
            session.execute(text("INSERT INTO t VALUES (1)"))
        with session_factory(engine)() as session:
            assert session.execute(text("SELECT x FROM t")).scalar() == 1
    finally:
        engine.dispose()


def test_sessions_keep_objects_readable_after_commit(db_url: str) -> None:
    engine = create_db_engine(db_url)
    try:
        factory = session_factory(engine)
        assert factory.kw["expire_on_commit"] is False
        assert issubclass(factory.class_, Session)  # sqlmodel's, with .exec()
    finally:
        engine.dispose()


def test_transaction_commits_or_rolls_back(db_url: str) -> None:
    engine = create_db_engine(db_url)
    factory = session_factory(engine)
    try:
        with transaction(factory) as session:
            session.execute(text("CREATE TABLE t (x INTEGER)"))
        with transaction(factory) as session:
            session.execute(text("INSERT INTO t VALUES (1)"))
        with pytest.raises(RuntimeError, match="abandon"):
            _insert_then_fail(factory)
        with factory() as session:
            assert session.execute(text("SELECT x FROM t")).scalars().all() == [1]
    finally:
        engine.dispose()


def _insert_then_fail(factory: sessionmaker[Session]) -> None:
    with transaction(factory) as session:
        session.execute(text("INSERT INTO t VALUES (2)"))
        raise RuntimeError("abandon")


def _read_then_write(
    factory: sessionmaker[Session], write: bool, barrier: threading.Barrier
) -> None:
    with transaction(factory, write=write) as session:
        value = session.execute(text("SELECT n FROM counter")).scalar_one()
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(timeout=0.5)  # both readers in their transaction at once, if allowed
        time.sleep(0.05)
        session.execute(text("UPDATE counter SET n = :n"), {"n": value + 1})


def test_sqlite_write_transactions_queue_and_lose_no_update(tmp_path: Path) -> None:
    """Two processes' worth of read-modify-write: with write=True neither update is lost."""
    engine = create_db_engine(f"sqlite:///{tmp_path / 'w.db'}")
    factory = session_factory(engine)
    try:
        with transaction(factory) as session:
            session.execute(text("CREATE TABLE counter (n INTEGER NOT NULL)"))
            session.execute(text("INSERT INTO counter VALUES (0)"))
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def run() -> None:
            try:
                _read_then_write(factory, True, barrier)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=run) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert errors == []
        with factory() as session:
            assert session.execute(text("SELECT n FROM counter")).scalar_one() == 2
    finally:
        engine.dispose()


def test_ping_answers_on_a_live_database(db_url: str) -> None:
    engine = create_db_engine(db_url)
    try:
        ping(engine)
    finally:
        engine.dispose()


def test_an_unreachable_database_is_a_database_error() -> None:
    url = "postgresql://sg:hunter2@127.0.0.1:1/none"
    engine = create_db_engine(url)
    try:
        with pytest.raises(DatabaseError, match="cannot be used") as raised:
            ping(engine)
        assert "hunter2" not in str(raised.value)
        with pytest.raises(DatabaseError, match=r"127\.0\.0\.1:1"):
            current_revision(url)
        with pytest.raises(DatabaseError, match=r"127\.0\.0\.1:1"):
            upgrade(url)
    finally:
        engine.dispose()
