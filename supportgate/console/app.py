"""The console: its own Litestar application, mounted by the API at /ui, so that what a
browser needs stays out of the API and its OpenAPI document (docs/console.md)."""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Request, Router, asgi
from litestar.connection import ASGIConnection
from litestar.enums import RequestEncodingType, ScopeType
from litestar.exceptions import HTTPException, NotAuthorizedException
from litestar.handlers import ASGIRouteHandler
from litestar.handlers.base import BaseRouteHandler
from litestar.static_files import create_static_files_router
from litestar.status_codes import HTTP_413_REQUEST_ENTITY_TOO_LARGE
from litestar.types import ASGIApp, Guard, Message, Receive, Scope, Send

from supportgate.auth.guard import KeyGuard, act_as
from supportgate.dependencies import provide
from supportgate.http_errors import log_unexpected
from supportgate.http_input import refuse_nul_characters

from .controllers import SHAPED_PAGES, PageController, SessionController
from .logins import ConsoleSessions
from .pages import page_role
from .rendering import EXCEPTION_HANDLERS, STATIC, template_config
from .services import ConsoleService
from .session import CONSOLE_COOKIE, CONSOLE_PATH, check_csrf

MAX_FORM_BYTES = 1024 * 1024
MAX_FORM_FIELDS = 64
# Why each header: docs/console.md. Hand-written rather than a library: four constant headers
# on one ASGI app need no more.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    )
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
)


async def refuse_crowded_forms(request: Request[Any, Any, Any]) -> None:
    """Before anything parses the form: Litestar parses it whole with `parse_qsl`, however many
    fields it has (150,000 posted to /ui/login held the event loop for half a second); counting
    its `&` is a scan of the bytes, in C. Litestar holds multipart forms to the same count."""
    if request.content_type[0] != RequestEncodingType.URL_ENCODED:
        return
    fields = (await request.body()).count(b"&") + 1
    if fields > MAX_FORM_FIELDS:
        raise HTTPException(
            status_code=HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            detail=f"the form has {fields} fields; the console's forms have at most "
            f"{MAX_FORM_FIELDS}",
        )


async def _before_request(request: Request[Any, Any, Any]) -> None:
    await refuse_crowded_forms(request)
    await refuse_nul_characters(request)
    await check_csrf(request)


def console_session_guard(logins: ConsoleSessions) -> Guard:
    """The server-side session the cookie names, then the page's role. Only the console
    application installs it, so the cookie opens nothing under /v1."""

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


def create_console(
    console: ConsoleService, logins: ConsoleSessions, key_guard: KeyGuard
) -> Litestar:
    pages = Router(CONSOLE_PATH, route_handlers=[SessionController, PageController, *SHAPED_PAGES])
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


def with_security_headers(app: ASGIApp) -> ASGIApp:
    """On every response: pages, errors, redirects and static files."""

    async def secured(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *SECURITY_HEADERS]
            await send(message)

        await app(scope, receive, send_secured)

    return secured


def console_mount(console: Litestar) -> ASGIRouteHandler:
    headed = with_security_headers(console)

    @asgi(CONSOLE_PATH, is_mount=True, copy_scope=False, opt={"console": True})
    async def ui(scope: Scope, receive: Receive, send: Send) -> None:
        # The mount strips /ui from the path; the console routes under /ui itself, so that its
        # requests know their own URLs and the request observer sees its route templates.
        scope["path"] = CONSOLE_PATH + scope["path"]
        await headed(scope, receive, send)

    return ui
