"""The console: its own Litestar application, mounted by the API at /ui, so that what a
browser needs (the session cookie, CSRF, HTML error pages) stays out of the API and its
OpenAPI document (docs/console.md). The API's guard lets the mount through
(`opt={"console": True}`).
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Request, Router, asgi
from litestar.handlers import ASGIRouteHandler
from litestar.static_files import create_static_files_router
from litestar.types import Receive, Scope, Send

from supportgate.auth.guard import KeyGuard
from supportgate.dependencies import provide
from supportgate.http_errors import log_unexpected
from supportgate.http_input import refuse_nul_characters

from .controllers import PageController, SessionController
from .form_limits import MAX_FORM_FIELDS, refuse_crowded_forms
from .guard import console_session_guard
from .headers import with_security_headers
from .logins import ConsoleSessions
from .rendering import EXCEPTION_HANDLERS, STATIC, template_config
from .services import ConsoleService
from .session import CONSOLE_PATH, check_csrf

MAX_FORM_BYTES = 1024 * 1024


async def _before_request(request: Request[Any, Any, Any]) -> None:
    await refuse_crowded_forms(request)
    await refuse_nul_characters(request)
    await check_csrf(request)


def create_console(
    console: ConsoleService, logins: ConsoleSessions, key_guard: KeyGuard
) -> Litestar:
    pages = Router(CONSOLE_PATH, route_handlers=[SessionController, PageController])
    static = create_static_files_router(
        f"{CONSOLE_PATH}/static",
        directories=[STATIC],
        opt={"public": True},
        include_in_schema=False,
    )
    return Litestar(
        route_handlers=[pages, static],
        dependencies=provide(console=console, logins=logins, key_guard=key_guard),
        guards=[console_session_guard(logins)],
        before_request=_before_request,
        exception_handlers=EXCEPTION_HANDLERS,
        after_exception=[log_unexpected],
        template_config=template_config(),
        logging_config=None,
        openapi_config=None,
        request_max_body_size=MAX_FORM_BYTES,
        multipart_form_part_limit=MAX_FORM_FIELDS,
    )


def console_mount(console: Litestar) -> ASGIRouteHandler:
    headed = with_security_headers(console)

    @asgi(CONSOLE_PATH, is_mount=True, copy_scope=False, opt={"console": True})
    async def ui(scope: Scope, receive: Receive, send: Send) -> None:
        # The mount strips /ui from the path; the console routes under /ui itself, so that its
        # requests know their own URLs and the request observer sees its route templates.
        scope["path"] = CONSOLE_PATH + scope["path"]
        await headed(scope, receive, send)

    return ui
