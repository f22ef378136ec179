"""Who may see the console: the API keys and roles, through a server-side session whose id an
HttpOnly cookie set by the login form holds; CSRF tokens on every POST; the API never takes
the cookie, the console never the header.

The matrix runs over every route the console serves, so a page added later is covered.
"""

from __future__ import annotations

import pytest
from litestar.routes import HTTPRoute

from supportgate.app import console_app
from supportgate.auth.guard import KeyGuard
from supportgate.auth.roles import Role, role_allows
from supportgate.console.pages import page_role
from supportgate.console.session import CONSOLE_COOKIE, CSRF_COOKIE, CSRF_FIELD

from ..api import Api
from .support import alert_text, csrf, login

PAGE_VALUES = {"kind": "HardwareManifest", "name": "nothing-here"}


def pages(api: Api) -> list[tuple[str, str, bool, Role]]:
    """(method, url, public, role) for every console route (static files aside)."""
    found: list[tuple[str, str, bool, Role]] = []
    for route in console_app(api.runtime, KeyGuard(api.runtime.keys, api.runtime.limits)).routes:
        if not isinstance(route, HTTPRoute) or route.path.startswith("/ui/static"):
            continue
        url = route.path_format
        for name in route.path_parameters:
            url = url.replace("{" + name + "}", PAGE_VALUES[name])
        for handler in route.route_handlers:
            for method in sorted(handler.http_methods - {"OPTIONS", "HEAD"}):
                public = bool(handler.opt.get("public"))
                found.append((str(method), url, public, page_role(handler)))
    return found


def test_every_page_needs_a_session_and_the_role_of_the_page(api: Api) -> None:
    served = pages(api)
    assert {url for _, url, _, _ in served} >= {
        "/ui/manifests",
        "/ui/audit",
        "/ui/audit.csv",
        "/ui/matrix",
        "/ui/impact",
        "/ui/alerts",
        "/ui/webhooks",
        "/ui/waivers",
    }
    assert sorted((m, u) for m, u, public, _ in served if public) == [
        ("GET", "/ui/login"),
        ("POST", "/ui/login"),
        ("POST", "/ui/logout"),
    ]
    client = api.client
    sessions = {}
    for role in ("procurement", "admin"):
        client.cookies.clear()  # two browsers: a login ends the session its browser had
        login(api, role)
        sessions[role] = client.cookies[CONSOLE_COOKIE]
    for method, url, public, needed in served:
        if public or method != "GET":
            continue
        client.cookies.clear()
        anonymous = client.get(url, follow_redirects=False)
        assert anonymous.status_code == 303, (url, anonymous.text)
        assert anonymous.headers["location"].startswith("/ui/login?next=%2Fui")
        for not_a_session in ("A" * 43, api.keys["admin"]):
            client.cookies.set(CONSOLE_COOKIE, not_a_session)
            assert client.get(url, follow_redirects=False).status_code == 303, url
        for role, session in sessions.items():
            client.cookies.set(CONSOLE_COOKIE, session)
            response = client.get(url, follow_redirects=False)
            if role_allows(role, needed):
                assert response.status_code not in {401, 403}, (url, role, response.text)
                assert not response.headers.get("location", "").startswith("/ui/login"), url
            else:
                assert response.status_code == 403, (url, role)
                assert needed in alert_text(response)


def test_the_console_takes_no_bearer_header_and_the_api_no_cookie(sqlite_api: Api) -> None:
    client = sqlite_api.client
    headers = sqlite_api.headers("admin")
    assert client.get("/ui/manifests", headers=headers, follow_redirects=False).status_code == 303
    login(sqlite_api, "admin")
    assert client.get("/ui/manifests").status_code == 200
    assert client.get("/v1/manifests").status_code == 401
    assert client.get("/v1/audit").status_code == 401


def test_login_sets_an_http_only_strict_cookie_and_goes_where_it_was_asked(
    sqlite_api: Api,
) -> None:
    client = sqlite_api.client
    token = csrf(sqlite_api)
    response = client.post(
        "/ui/login",
        data={"key": sqlite_api.keys["procurement"], CSRF_FIELD: token, "next": "/ui/audit?x=1"},
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/audit?x=1"
    cookies = {c.split("=", 1)[0]: c for c in response.headers.get_list("set-cookie")}
    session = cookies[CONSOLE_COOKIE]
    for attribute in ("HttpOnly", "Path=/ui", "SameSite=strict"):
        assert attribute in session
    assert "Secure" not in session  # plain http here; see the https test
    assert CSRF_COOKIE in cookies  # a new token for the new session
    assert client.cookies.get(CSRF_COOKIE) != token


def test_the_cookies_are_secure_over_https(sqlite_api: Api) -> None:
    client = sqlite_api.client
    client.base_url = "https://testserver.local"
    page = client.get("/ui/login")
    assert "Secure" in page.headers["set-cookie"]
    response = client.post(
        "/ui/login",
        data={"key": sqlite_api.keys["admin"], CSRF_FIELD: client.cookies[CSRF_COOKIE]},
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert all("Secure" in c for c in response.headers.get_list("set-cookie"))
    assert client.get("/ui/manifests").status_code == 200


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/ui/", "/v1/audit"])
def test_login_never_redirects_off_the_console(sqlite_api: Api, target: str) -> None:
    response = sqlite_api.client.post(
        "/ui/login",
        data={"key": sqlite_api.keys["admin"], CSRF_FIELD: csrf(sqlite_api), "next": target},
        follow_redirects=False,
    )
    assert response.headers["location"] == "/ui/manifests"


def test_a_bad_key_stays_on_the_form_and_a_ci_key_gets_the_403_page(sqlite_api: Api) -> None:
    client = sqlite_api.client
    for key, status, message in [
        ("sg_" + "y" * 43, 401, "unknown API key"),
        ("", 401, "enter an API key"),
        (sqlite_api.keys["ci"], 403, "the console needs the procurement role"),
    ]:
        response = client.post("/ui/login", data={"key": key, CSRF_FIELD: csrf(sqlite_api)})
        assert response.status_code == status
        assert message in alert_text(response)
        assert CONSOLE_COOKIE not in client.cookies


def test_a_post_without_the_csrf_token_is_refused(sqlite_api: Api) -> None:
    client = sqlite_api.client
    key = sqlite_api.keys["admin"]
    assert client.post("/ui/login", data={"key": key}).status_code == 403
    csrf(sqlite_api)
    assert client.post("/ui/login", data={"key": key, CSRF_FIELD: "x" * 43}).status_code == 403
    assert CONSOLE_COOKIE not in client.cookies

    token = login(sqlite_api, "admin")
    wrong = token[:-1] + ("B" if token.endswith("A") else "A")  # never the token itself
    for data in ({}, {CSRF_FIELD: ""}, {CSRF_FIELD: wrong}):
        refused = client.post("/ui/impact", data={"matrix": "version: x", **data})
        assert refused.status_code == 403
        assert "CSRF" in alert_text(refused)
        assert client.post("/ui/logout", data=data, follow_redirects=False).status_code == 403
    # a JSON body carries no form field: refused too
    assert client.post("/ui/impact", json={CSRF_FIELD: token}).status_code == 403
    assert client.get("/ui/manifests").status_code == 200  # still logged in


def test_logout_clears_the_cookie(sqlite_api: Api) -> None:
    client = sqlite_api.client
    token = login(sqlite_api)
    response = client.post("/ui/logout", data={CSRF_FIELD: token}, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/login"
    assert CONSOLE_COOKIE not in client.cookies
    assert client.get("/ui/manifests", follow_redirects=False).status_code == 303
