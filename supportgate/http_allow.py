"""`Allow` with every method of the path, on each OPTIONS answer and each 405 (RFC 9110), written
from the app's routes: Litestar 2's lists too few (litestar#4169), its 405 none (litestar#4277)."""

from __future__ import annotations

from litestar import Litestar
from litestar.datastructures import MutableScopeHeaders
from litestar.exceptions import NotFoundException
from litestar.middleware import ASGIMiddleware
from litestar.routes import HTTPRoute
from litestar.status_codes import HTTP_204_NO_CONTENT, HTTP_405_METHOD_NOT_ALLOWED
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from litestar.utils import normalize_path


class AllowEveryMethod(ASGIMiddleware):
    def __init__(self, app: Litestar) -> None:
        self._methods = {
            route.path_format: ", ".join(sorted(route.methods))
            for route in app.routes
            if isinstance(route, HTTPRoute)
        }
        self._router = app.asgi_router

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        async def send_with_allow(message: Message) -> None:
            if message["type"] == "http.response.start" and self._lists_methods(scope, message):
                allowed = self._allowed(scope)
                if allowed is not None:
                    MutableScopeHeaders.from_message(message)["allow"] = allowed
            await send(message)

        await next_app(scope, receive, send_with_allow)

    @staticmethod
    def _lists_methods(scope: Scope, start: Message) -> bool:
        status = start.get("status")
        return status == HTTP_405_METHOD_NOT_ALLOWED or (
            scope.get("method") == "OPTIONS" and status == HTTP_204_NO_CONTENT
        )

    def _allowed(self, scope: Scope) -> str | None:
        template = scope.get("path_template")
        if template is None:  # a 405: routing refused the method before naming the route
            try:  # every route answers OPTIONS, so routing that finds its template
                routed = self._router.handle_routing(
                    path=normalize_path(scope["path"]), method="OPTIONS"
                )
            except NotFoundException:
                return None
            template = routed[4]
        return self._methods.get(template)
