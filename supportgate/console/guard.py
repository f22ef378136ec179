"""The console's guard: the server-side session its cookie names, then the page's role. Only
the console application installs it, so the cookie opens nothing under /v1.
"""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.handlers.base import BaseRouteHandler
from litestar.types import Guard

from supportgate.auth.guard import act_as

from .logins import ConsoleSessions
from .pages import page_role
from .session import CONSOLE_COOKIE


def console_session_guard(logins: ConsoleSessions) -> Guard:
    async def require_console_session(
        connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
    ) -> None:
        if handler.opt.get("public"):
            return
        session_id = connection.cookies.get(CONSOLE_COOKIE)
        if not session_id:
            raise NotAuthorizedException("log in with an API key")
        principal = await logins.principal_in_thread(session_id)
        if principal is None:
            raise NotAuthorizedException("the console session has ended: log in again")
        act_as(connection, principal, page_role(handler))

    return require_console_session
