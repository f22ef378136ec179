"""`supportgate serve`'s HTTP server: uvicorn with limits on the connections it holds. uvicorn
sets no deadline for a request's head (slowloris: enough silent connections exhaust the file
descriptors) and its `limit_concurrency` answers only once a head has arrived, so its h11
protocol is subclassed for config.py's ServerLimits (docs/configuration.md). A server facing
the internet still belongs behind a proxy that limits per client address."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from supportgate.config import ServerLimits
from supportgate.logging import get_logger

log = get_logger(__name__)
SHUTDOWN_GRACE_S = 10
"""After SIGTERM, how long requests under way may finish before they are cancelled; then the
service stops its parts (the ledger's writer writes what it holds) and exits."""


def run(app: Any, *, host: str, port: int, limits: ServerLimits) -> None:
    uvicorn.run(
        app,
        host=host,
        port=port,
        http=guarded_protocol(limits),
        timeout_keep_alive=limits.keep_alive_timeout,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        log_config=None,
        access_log=False,
    )


def guarded_protocol(limits: ServerLimits) -> type[asyncio.Protocol]:

    class Guarded(_GuardedH11Protocol):
        header_timeout = limits.header_timeout
        max_connections = limits.max_connections

    return Guarded


class _GuardedH11Protocol(H11Protocol):
    header_timeout: ClassVar[float]
    max_connections: ClassVar[int]
    _head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            log.warning("connection_refused", reason="max_connections", limit=self.max_connections)
            transport.abort()
            return
        self._await_head()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the head is in: a body, or done
            self._head_arrived()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._await_head()  # the next request's, on this kept-alive connection

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_arrived()
        super().connection_lost(exc)

    def _await_head(self) -> None:
        self._head_arrived()
        self._head_deadline = self.loop.call_later(self.header_timeout, self._head_too_late)

    def _head_arrived(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_late(self) -> None:
        self._head_deadline = None
        if not self.transport.is_closing():
            log.info("connection_closed", reason="header_timeout", seconds=self.header_timeout)
            self.transport.close()
