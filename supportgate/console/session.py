"""The console's two cookies: its server-side session's id (never the API key), and its CSRF
token (double submit); what each holds and why: docs/console.md, Access."""

from __future__ import annotations

import re
import secrets
from typing import Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie
from litestar.exceptions import PermissionDeniedException

CONSOLE_PATH = "/ui"
CONSOLE_COOKIE = "supportgate_console"
CSRF_COOKIE = "supportgate_console_csrf"
CSRF_FIELD = "csrf_token"
CSRF_SECONDS = 8 * 3600
"""How long a browser keeps a CSRF token; a page without one makes a new one."""
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_NEW_TOKEN_STATE = "console_new_csrf_token"  # noqa: S105 - a state key, no secret
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$")


class CsrfRefused(PermissionDeniedException):
    """An unsafe request without the page's CSRF token."""


def _cookie(
    connection: ASGIConnection[Any, Any, Any, Any], key: str, value: str, max_age: int
) -> Cookie:
    return Cookie(
        key=key,
        value=value,
        path=CONSOLE_PATH,
        httponly=True,
        samesite="strict",
        secure=connection.url.scheme == "https",
        max_age=max_age,
    )


def login_cookies(request: Request[Any, Any, Any], session_id: str, seconds: int) -> list[Cookie]:
    return [
        _cookie(request, CONSOLE_COOKIE, session_id, seconds),
        _cookie(request, CSRF_COOKIE, new_csrf_token(request), CSRF_SECONDS),
    ]


def logout_cookies(request: Request[Any, Any, Any]) -> list[Cookie]:
    return [_cookie(request, CONSOLE_COOKIE, "", 0), _cookie(request, CSRF_COOKIE, "", 0)]


def new_csrf_token(request: Request[Any, Any, Any]) -> str:
    token = secrets.token_urlsafe(32)
    request.state[_NEW_TOKEN_STATE] = token
    return token


def csrf_token(request: Request[Any, Any, Any]) -> str:
    """The token this page's forms carry: the cookie's, or a new one (see csrf_cookies)."""
    token = request.state.get(_NEW_TOKEN_STATE) or request.cookies.get(CSRF_COOKIE)
    return token if token and _TOKEN.match(token) else new_csrf_token(request)


def csrf_cookies(request: Request[Any, Any, Any]) -> list[Cookie]:
    """The cookie for a token made while answering this request, if one was."""
    token = request.state.get(_NEW_TOKEN_STATE)
    return [_cookie(request, CSRF_COOKIE, token, CSRF_SECONDS)] if token else []


async def check_csrf(request: Request[Any, Any, Any]) -> None:
    """A `before_request` hook, so that no handler runs without it."""
    if request.method not in UNSAFE_METHODS:
        return
    cookie = request.cookies.get(CSRF_COOKIE) or ""
    form = await request.form()
    sent = form.get(CSRF_FIELD)
    if not (
        isinstance(sent, str)
        and _TOKEN.match(cookie)
        and secrets.compare_digest(sent.encode(), cookie.encode())
    ):
        raise CsrfRefused(
            "the form's CSRF token is missing or out of date: reload the page and try again"
        )


def local_target(target: str | None) -> str:
    """Where to go after logging in: a console path, never another site."""
    if target and target.startswith(CONSOLE_PATH + "/") and not any(c in target for c in "\\\r\n"):
        return target
    return f"{CONSOLE_PATH}/manifests"
