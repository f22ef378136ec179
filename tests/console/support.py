"""Helpers for the console tests: logging in through the form, the CSRF token pages carry."""

from __future__ import annotations

import html
import re

import httpx

from supportgate.console.session import CSRF_COOKIE, CSRF_FIELD

from ..api import Api

_TOKEN = re.compile(rf'name="{CSRF_FIELD}" value="([^"]+)"')
_ALERT = re.compile(r'role="alert">(.*?)</p>', re.S)


def csrf(api: Api, page: str = "/ui/login") -> str:
    """The CSRF token the page's forms carry (getting the page sets its cookie)."""
    response = api.client.get(page)
    assert response.status_code == 200, response.text
    found = _TOKEN.search(response.text)
    assert found is not None, response.text
    assert api.client.cookies.get(CSRF_COOKIE) == found.group(1)
    return found.group(1)


def login(api: Api, role: str = "procurement") -> str:
    """Log in with the role's key through the form; the CSRF token of the new session."""
    response = api.client.post(
        "/ui/login",
        data={"key": api.keys[role], CSRF_FIELD: csrf(api)},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text
    token = api.client.cookies.get(CSRF_COOKIE)
    assert token
    return token


def alert_text(response: httpx.Response) -> str:
    """The error message a page shows (`role="alert"`), unescaped."""
    found = _ALERT.search(response.text)
    assert found is not None, response.text
    return html.unescape(found.group(1))
