"""Console sessions are server-side: the cookie holds a random session id (the table keeps only
its hash), never the key; logout, the idle and absolute timeouts and the key's revocation end
a session, on every replica (the sessions are in the database).

Time is a FakeClock (Runtime.clock): the timeouts are driven by advancing it, never by sleeping.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from litestar.testing import TestClient
from sqlalchemy import text

from supportgate.app import create_app
from supportgate.auth.services import REFRESH_SECONDS
from supportgate.config import Settings
from supportgate.console.session import CONSOLE_COOKIE, CSRF_COOKIE, CSRF_FIELD
from supportgate.errors import UsageError
from supportgate.runtime import Runtime

from ..api import Api, running_api
from ..clock import FakeClock
from ..signing import with_test_key
from .support import csrf, login

IDLE = 30 * 60
LIFETIME = 8 * 3600


def logged_in(api: Api, role: str = "procurement") -> str:
    """Log in through the form; the session cookie's value."""
    login(api, role)
    session = api.client.cookies.get(CONSOLE_COOKIE)
    assert session
    return session


def shows_page(client: TestClient[Any], session: str, page: str = "/ui/manifests") -> bool:
    """Whether the console answers `page` to a browser that sends only this session cookie."""
    client.cookies.clear()
    client.cookies.set(CONSOLE_COOKIE, session, domain=client.base_url.host, path="/ui")
    response = client.get(page, follow_redirects=False)
    if response.status_code == 303:
        assert response.headers["location"].startswith("/ui/login?next=")
        return False
    assert response.status_code == 200, response.text
    return True


def session_rows(api: Api) -> list[dict[str, Any]]:
    with api.runtime.db.connect() as connection:
        rows = connection.execute(text("SELECT * FROM console_sessions"))
        return [dict(row._mapping) for row in rows]


def test_the_cookie_is_a_session_id_that_is_no_key(api: Api) -> None:
    session = logged_in(api)
    assert session not in api.keys.values()
    assert not any(key in session or session in key for key in api.keys.values())
    for path in ("/v1/manifests", "/v1/audit"):
        bearer = api.client.get(path, headers={"Authorization": f"Bearer {session}"})
        assert bearer.status_code == 401, path
    # the table keeps the id's sha256, nothing that opens the session or names the key's secret
    (row,) = session_rows(api)
    assert row["id_hash"] == hashlib.sha256(session.encode()).hexdigest()
    stored = {str(value) for value in row.values()}
    assert session not in stored
    assert not stored & set(api.keys.values())
    assert shows_page(api.client, session)


def test_an_api_key_or_an_invented_id_in_the_cookie_is_no_session(api: Api) -> None:
    for forged in (api.keys["admin"], "A" * 43, "", "x" * 5000):
        assert not shows_page(api.client, forged), forged[:10]


def test_logout_ends_the_session_for_whoever_kept_the_cookie(api: Api) -> None:
    session = logged_in(api)
    token = api.client.cookies[CSRF_COOKIE]
    response = api.client.post("/ui/logout", data={CSRF_FIELD: token}, follow_redirects=False)
    assert response.status_code == 303
    assert session_rows(api) == []
    assert not shows_page(api.client, session)


def test_logging_in_again_ends_the_session_the_browser_had(api: Api) -> None:
    first = logged_in(api)
    second = logged_in(api, "admin")
    assert first != second
    assert not shows_page(api.client, first)
    assert shows_page(api.client, second, "/ui/webhooks")


def test_the_idle_timeout_ends_a_session_left_alone(clocked_api: Api, clock: FakeClock) -> None:
    api = clocked_api
    session = logged_in(api)
    for _ in range(3):  # each visit within the idle timeout keeps the session alive
        clock.advance(IDLE - 1)
        assert shows_page(api.client, session)
    clock.advance(IDLE)
    assert not shows_page(api.client, session)
    assert session_rows(api) == []  # an ended session's row goes


def test_the_absolute_timeout_ends_even_a_busy_session(clocked_api: Api, clock: FakeClock) -> None:
    api = clocked_api
    session = logged_in(api)
    visited = 0
    while visited + 600 < LIFETIME:
        clock.advance(600)
        visited += 600
        assert shows_page(api.client, session), visited
    clock.advance(LIFETIME - visited)
    assert not shows_page(api.client, session)


def test_the_timeouts_are_configurable(migrated_db_url: str, clock: FakeClock) -> None:
    with running_api(
        migrated_db_url, clock=clock, console_idle_timeout=60.0, console_session_timeout=150.0
    ) as api:
        session = logged_in(api)
        clock.advance(59)
        assert shows_page(api.client, session)
        clock.advance(61)
        assert not shows_page(api.client, session)
        session = logged_in(api)
        for _ in range(2):
            clock.advance(50)
            assert shows_page(api.client, session)
        clock.advance(50)  # 150 s after login, though it was used 50 s ago
        assert not shows_page(api.client, session)
        response = api.client.post(
            "/ui/login",
            data={"key": api.keys["admin"], CSRF_FIELD: csrf(api)},
            follow_redirects=False,
        )
        cookies = response.headers.get_list("set-cookie")
        cookie = next(c for c in cookies if c.startswith(CONSOLE_COOKIE + "="))
        assert "Max-Age=150" in cookie


def test_the_timeouts_are_read_from_the_environment() -> None:
    settings = Settings.from_env(
        {"SUPPORTGATE_CONSOLE_IDLE_TIMEOUT": "900", "SUPPORTGATE_CONSOLE_SESSION_TIMEOUT": "3600"}
    )
    assert (settings.console_idle_timeout, settings.console_session_timeout) == (900.0, 3600.0)
    assert Settings.from_env({}).console_idle_timeout == IDLE


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf", "soon"])
@pytest.mark.parametrize(
    "variable", ["SUPPORTGATE_CONSOLE_IDLE_TIMEOUT", "SUPPORTGATE_CONSOLE_SESSION_TIMEOUT"]
)
def test_a_timeout_must_be_a_positive_number_of_seconds(variable: str, value: str) -> None:
    with pytest.raises(UsageError, match="seconds") as refused:
        Settings.from_env({variable: value})
    assert refused.value.field == variable


def test_a_revoked_key_ends_its_sessions_at_once(api: Api) -> None:
    session = logged_in(api)
    assert shows_page(api.client, session)
    api.runtime.keys.revoke("procurement")  # what `keys revoke` and DELETE /v1/keys/{name} do
    assert not shows_page(api.client, session)


def test_a_key_revoked_elsewhere_ends_its_sessions_within_a_refresh(
    clocked_api: Api, clock: FakeClock
) -> None:
    """Revoked by another replica or the CLI (here: behind this service's back): the session
    ends once this replica's copy of the keys is REFRESH_SECONDS old (test_keys_served.py
    shows the 2 s between two real processes)."""
    session = logged_in(clocked_api)
    assert shows_page(clocked_api.client, session)
    with clocked_api.runtime.db.begin() as connection:
        connection.execute(
            text("UPDATE api_keys SET revoked_at = CURRENT_TIMESTAMP WHERE name = 'procurement'")
        )
    clock.advance(REFRESH_SECONDS)
    assert not shows_page(clocked_api.client, session)


@contextmanager
def replica(api: Api) -> Iterator[TestClient[Any]]:
    """A second service on the same database, as another server process would be."""
    settings = with_test_key(api.runtime.settings)
    with TestClient(create_app(runtime=Runtime.build(settings))) as client:
        yield client


def test_a_session_holds_on_every_replica_and_logout_on_one_ends_it_on_all(api: Api) -> None:
    session = logged_in(api)
    with replica(api) as other:
        assert shows_page(other, session)
        other.get("/ui/manifests")  # the page sets the CSRF cookie its logout form needs
        token = other.cookies[CSRF_COOKIE]
        ended = other.post("/ui/logout", data={CSRF_FIELD: token}, follow_redirects=False)
        assert ended.status_code == 303
        assert not shows_page(other, session)
    assert not shows_page(api.client, session)
