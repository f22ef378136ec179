"""One deadline for a whole HTTP exchange with httpx (webhook deliveries, the https matrix
source). httpx's timeouts bound each connect, read and write, so a peer that trickles a byte
every few seconds holds the caller for as long as it likes. httpcore's `trace` extension hands
over the connection's socket; when the deadline passes, a timer shuts it down and the blocked
read returns at once (`Cutoff.passed` says why). Use a client without keep-alive, so that
every exchange has a socket of its own to cut.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any


class Cutoff:
    def __init__(self, seconds: float) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self.passed = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        # The socket once connected, and the TLS socket that takes its place after the handshake.
        if event not in {"connection.connect_tcp.complete", "connection.start_tls.complete"}:
            return
        connected = info["return_value"].get_extra_info("socket")
        with self._lock:
            self._socket = connected
            passed = self.passed
        if passed:
            _shut(connected)

    def _expire(self) -> None:
        with self._lock:
            self.passed = True
            connected = self._socket
        if connected is not None:
            _shut(connected)

    def cancel(self) -> None:
        self._timer.cancel()


def _shut(connected: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed: the attempt ended meanwhile
        connected.shutdown(socket.SHUT_RDWR)
