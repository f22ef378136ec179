from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.db import create_db_engine
from supportgate.db.migrate import upgrade
from supportgate.policy.bundle import PolicyBundle

from .api import Api, running_api
from .clock import FakeClock
from .examples import EXAMPLES
from .services import (
    PostgresUnavailableError,
    find_opa,
    postgres_admin_url,
    require_or_skip,
    running_opa,
    temporary_database,
)


@pytest.fixture(scope="session")
def policy_bundle() -> PolicyBundle:
    return PolicyBundle.load(DEFAULT_POLICY_DIR)


@pytest.fixture(scope="session")
def opa_binary() -> str:
    opa = find_opa()
    if opa is None:
        require_or_skip(
            "SUPPORTGATE_REQUIRE_OPA", "no `opa` binary on PATH or in $(go env GOPATH)/bin"
        )
    assert opa is not None
    return opa


@pytest.fixture(scope="session")
def opa_url(opa_binary: str) -> Iterator[str]:
    with running_opa(opa_binary) as url:
        yield url


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    """examples/manifests/: the example manifests and their expected.yaml."""
    return EXAMPLES


@pytest.fixture(params=["embedded", "opa"])
def engine_kind(request: pytest.FixtureRequest) -> str:
    """Run a test against both engines; the OPA run needs (or in CI requires) an opa binary."""
    kind = str(request.param)
    if kind == "opa":
        request.getfixturevalue("opa_url")
    return kind


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """A PostgreSQL server URL (a role that may CREATE DATABASE); skips, or fails in CI, without."""
    try:
        return postgres_admin_url()
    except PostgresUnavailableError as exc:
        require_or_skip("SUPPORTGATE_REQUIRE_POSTGRES", str(exc))
        raise  # not reached: require_or_skip skips or fails


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database for one test: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'supportgate.db'}"
        return
    with temporary_database(request.getfixturevalue("postgres_url")) as url:
        yield url


@pytest.fixture
def migrated_db_url(db_url: str) -> str:
    """`db_url` with the schema upgraded to head."""
    upgrade(db_url)
    return db_url


@pytest.fixture
def migrated_db(migrated_db_url: str) -> Iterator[Engine]:
    """An engine on `migrated_db_url`, disposed after the test."""
    engine = create_db_engine(migrated_db_url)
    try:
        yield engine
    finally:
        engine.dispose()


@pytest.fixture
def api(db_url: str) -> Iterator[Api]:
    """The API on a fresh database, once on SQLite and once on PostgreSQL."""
    with running_api(db_url) as running:
        yield running


@pytest.fixture
def clock() -> FakeClock:
    """A clock that moves only when the test says (`clock.advance(seconds)`)."""
    return FakeClock()


@pytest.fixture
def clocked_api(db_url: str, clock: FakeClock) -> Iterator[Api]:
    """`api` whose parts ask `clock` the time: expiries, schedules and cache ages move when
    the test advances it (sweeps and requests still stamp decisions with the real time)."""
    with running_api(db_url, clock=clock) as running:
        yield running


@pytest.fixture
def sqlite_api(tmp_path: Path) -> Iterator[Api]:
    """The API on a fresh SQLite database only (for tests where the backend does not matter)."""
    with running_api(f"sqlite:///{tmp_path / 'supportgate.db'}") as running:
        yield running
