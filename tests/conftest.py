from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.db import create_db_engine, session_factory
from supportgate.db.migrate import upgrade
from supportgate.policy.bundle import PolicyBundle

from .api import Api, running_api
from .clock import FakeClock
from .engines import Engines, example_pools
from .examples import ACME, EXAMPLES
from .opa import RunningOpa, running_opa
from .receiver import Receiver, running_receiver
from .services import (
    PostgresUnavailableError,
    copy_sqlite,
    find_opa,
    postgres_admin_url,
    require_or_skip,
    template_database,
    temporary_database,
)
from .tlog.go_verifier import build_verifier

SLOW_FIXTURES = {"fresh_database", "sqlite_template", "postgres_url", "go_verifier"}
"""Fixtures that make a database or build a program: a test using one is not `fast`."""
SLOW_MARKERS = ("go", "postgres", "browser", "slow")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse a test declared `fast` that uses a SLOW_FIXTURE or carries a SLOW_MARKER (a
    database fixture added to a `fast` module must not slow `-m fast` down unseen)."""
    wrong = [
        item.nodeid
        for item in items
        if item.get_closest_marker("fast")
        and (
            SLOW_FIXTURES & set(getattr(item, "fixturenames", ()))
            or any(item.get_closest_marker(name) for name in SLOW_MARKERS)
        )
    ]
    if wrong:
        raise pytest.UsageError("marked fast but not in-process:\n" + "\n".join(wrong))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After a module's last test (its module fixtures torn down): no event loop may be left
    running in this thread, or every later test of the worker that calls asyncio.run fails
    (Playwright's sync API keeps one while it runs)."""
    yield
    module = getattr(item, "module", None)
    if nextitem is not None and getattr(nextitem, "module", None) is module:
        return
    if asyncio.events._get_running_loop() is not None:
        asyncio.events._set_running_loop(None)  # so the worker's next modules run at all
        pytest.fail(f"{item.nodeid}: its module left an event loop running in this thread")


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
def go_verifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Go verifier of tests/tlog_verifier, built once per session for the `go` tests."""
    return build_verifier(tmp_path_factory.mktemp("go"))


@pytest.fixture(scope="session")
def opa_server(opa_binary: str) -> Iterator[RunningOpa]:
    """One OPA for the session, holding the service's bundle (tests/opa.py)."""
    with running_opa(opa_binary) as server:
        yield server


@pytest.fixture(scope="session")
def opa_url(opa_server: RunningOpa) -> str:
    return opa_server.url


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    """examples/manifests/: the example manifests (and nothing else)."""
    return EXAMPLES


@pytest.fixture(scope="module")
def engines(policy_bundle: PolicyBundle, opa_url: str, examples_dir: Path) -> Iterator[Engines]:
    """Both engines with the example pools (tests/engines.py), once per module."""
    built = Engines(policy_bundle, opa_url, example_pools(examples_dir))
    yield built
    built.opa.close()


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


@pytest.fixture(scope="session")
def postgres_template(postgres_url: str) -> Iterator[str]:
    """A PostgreSQL database migrated to head once per session (per xdist worker), which
    `migrated_db_url` copies for each test; its name."""
    with template_database(postgres_url, upgrade) as name:
        yield name


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head once per session, which `migrated_db_url` copies."""
    path = tmp_path_factory.mktemp("sqlite-template") / "supportgate.db"
    upgrade(f"sqlite:///{path}")
    return path


class FreshDatabase:
    """A test's one database, made when the test first asks for it: empty (`db_url`) or at
    head (`migrated_db_url`, a copy of the session's migrated template: migrating each test's
    database was most of a database test's time). A test asking for both gets one database,
    at head."""

    def __init__(self, *, empty: Callable[[], str], migrated: Callable[[], str]) -> None:
        self._make_empty = empty
        self._make_migrated = migrated
        self._url: str | None = None
        self._migrated = False

    def url(self, *, migrated: bool) -> str:
        if self._url is None:
            self._url = self._make_migrated() if migrated else self._make_empty()
            self._migrated = migrated
        elif migrated and not self._migrated:
            upgrade(self._url)
            self._migrated = True
        return self._url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def fresh_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FreshDatabase]:
    """The database of a test using `db_url` or `migrated_db_url`, which runs once on a SQLite
    file, then once on a PostgreSQL database (dropped after the test)."""
    if request.param == "sqlite":
        path = tmp_path / "supportgate.db"
        yield FreshDatabase(
            empty=lambda: f"sqlite:///{path}",
            migrated=lambda: copy_sqlite(request.getfixturevalue("sqlite_template"), path),
        )
        return
    server = request.getfixturevalue("postgres_url")
    with ExitStack() as drop:
        yield FreshDatabase(
            empty=lambda: drop.enter_context(temporary_database(server)),
            migrated=lambda: drop.enter_context(
                temporary_database(server, template=request.getfixturevalue("postgres_template"))
            ),
        )


@pytest.fixture
def db_url(fresh_database: FreshDatabase) -> str:
    """A fresh, empty database for one test: a SQLite file, then a PostgreSQL database."""
    return fresh_database.url(migrated=False)


@pytest.fixture
def migrated_db_url(fresh_database: FreshDatabase) -> str:
    """`db_url` with the schema at head."""
    return fresh_database.url(migrated=True)


@pytest.fixture
def migrated_db(migrated_db_url: str) -> Iterator[Engine]:
    """An engine on `migrated_db_url`, disposed after the test."""
    engine = create_db_engine(migrated_db_url)
    try:
        yield engine
    finally:
        engine.dispose()


@pytest.fixture
def sessions(migrated_db: Engine) -> sessionmaker[Session]:
    return session_factory(migrated_db)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A webhook receiver on a loopback port (tests/receiver.py)."""
    with running_receiver() as running:
        yield running


@pytest.fixture
def api(migrated_db_url: str) -> Iterator[Api]:
    """The API on a fresh database, once on SQLite and once on PostgreSQL."""
    with running_api(migrated_db_url) as running:
        yield running


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def shared_api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Api]:
    """`api`, built once per module and backend, for tests whose every request is refused
    (bad input answered 400): building the app was most of such a test's time. A test that
    changes what it holds would change it for the next test, so such a test takes `api`."""
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("shared-api") / "supportgate.db"
        with running_api(copy_sqlite(request.getfixturevalue("sqlite_template"), path)) as api:
            yield api
        return
    server = request.getfixturevalue("postgres_url")
    template = request.getfixturevalue("postgres_template")
    with temporary_database(server, template=template) as url, running_api(url) as api:
        yield api


@pytest.fixture
def clock() -> FakeClock:
    """A clock that moves only when the test says (`clock.advance(seconds)`)."""
    return FakeClock()


@pytest.fixture
def clocked_api(migrated_db_url: str, clock: FakeClock) -> Iterator[Api]:
    """`api` whose parts ask `clock` the time: expiries, schedules and cache ages move when
    the test advances it (sweeps and requests still stamp decisions with the real time)."""
    with running_api(migrated_db_url, clock=clock) as running:
        yield running


@pytest.fixture
def acme_api(migrated_db_url: str) -> Iterator[Api]:
    """`api` with the example organisation bundle added to the built-in policies."""
    with running_api(migrated_db_url, policy_bundles=(ACME,)) as running:
        yield running


@pytest.fixture
def sqlite_api(sqlite_template: Path, tmp_path: Path) -> Iterator[Api]:
    """The API on a fresh SQLite database only (for tests where the backend does not matter)."""
    with running_api(copy_sqlite(sqlite_template, tmp_path / "supportgate.db")) as running:
        yield running
