"""The canonical request event (`request`) and the latency histogram, from one ASGI middleware;
the request's id (X-Request-ID, or a new one, echoed back) is bound to the log context. The
histogram's labels come from bounded sets only, or anyone could grow the metrics without end:
an invented method is `other`, a path no route matched `unmatched`."""

from __future__ import annotations

import time
from http import HTTPMethod
from typing import Any
from uuid import uuid4

from litestar.datastructures import MutableScopeHeaders
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from prometheus_client import Histogram
from structlog.contextvars import bound_contextvars

from supportgate.auth.guard import PRINCIPAL_STATE_KEY
from supportgate.logging import get_logger

log = get_logger("supportgate.request")
KNOWN_METHODS = frozenset(HTTPMethod.__members__)
UNMATCHED_ROUTE = "unmatched"
OTHER_METHOD = "other"


class RequestObserver(ASGIMiddleware):
    def __init__(self, durations: Histogram) -> None:
        self.durations = durations

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        started = time.perf_counter()
        headers = dict(scope.get("headers") or [])
        request_id = headers.get(b"x-request-id", b"").decode("latin-1")[:128] or uuid4().hex
        status = 500

        async def send_and_watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableScopeHeaders.from_message(message)["x-request-id"] = request_id
            await send(message)

        with bound_contextvars(request_id=request_id):
            try:
                await next_app(scope, receive, send_and_watch)
            finally:
                self._observe(scope, status, started)

    def _observe(self, scope: Scope, status: int, started: float) -> None:
        duration = time.perf_counter() - started
        route = scope.get("path_template") or UNMATCHED_ROUTE
        method = scope.get("method", "")
        label = method if method in KNOWN_METHODS else OTHER_METHOD
        self.durations.labels(label, route, str(status)).observe(duration)
        state: dict[str, Any] = scope.get("state") or {}
        principal = state.get(PRINCIPAL_STATE_KEY)
        log.info(
            "request",
            method=scope.get("method"),
            route=route,
            status=status,
            duration_ms=round(duration * 1000, 3),
            key_name=getattr(principal, "name", None),
            **state.get("log", {}),
        )
