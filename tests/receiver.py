"""A real webhook receiver for tests: an HTTP server on a loopback port, in a thread.

It answers POSTs as scripted (a status code; HANG: no answer until the test ends, so the
sender times out; TRICKLE: a 200 sent a byte at a time, each well within a read timeout),
then with `default`; it records every request it gets. It listens on loopback, which
webhooks reach only through the allow-list: `ALLOW` admits it. `verify` checks a
Standard Webhooks signature by hand (hmac + base64), independently of supportgate.webhooks.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

HANG: Literal["hang"] = "hang"
HANG_LIMIT_S = 60.0
TRICKLE: Literal["trickle"] = "trickle"
TRICKLE_GAP_S = 0.25
"""Between two bytes of a trickled answer: the whole 200 takes about 10 s."""
ALLOW = ("127.0.0.1/32",)
"""SUPPORTGATE_WEBHOOK_ALLOW for the receivers (supportgate/webhooks/targets.py)."""

Reply = int | Literal["hang", "trickle"]


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]  # names in lower case
    body: bytes


class Receiver:
    def __init__(self, default: int = 200) -> None:
        self.default = default
        self.requests: list[Received] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self.release = threading.Event()  # ends every hang
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/hooks"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def next_reply(self, received: Received) -> Reply:
        with self._lock:
            self.requests.append(received)
            return self._script.popleft() if self._script else self.default

    def received(self) -> list[Received]:
        with self._lock:
            return list(self.requests)


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {name.lower(): value for name, value in self.headers.items()}
            reply = receiver.next_reply(Received(headers=headers, body=body))
            if reply == HANG:
                receiver.release.wait(HANG_LIMIT_S)
                reply = 200
            if reply == TRICKLE:
                self._trickle(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                return
            try:
                self.send_response(reply)
                self.send_header("content-length", "0")
                self.end_headers()
            except OSError:  # the sender gave up waiting (a timeout)
                pass

        def _trickle(self, answer: bytes) -> None:
            for index in range(len(answer)):
                if receiver.release.wait(TRICKLE_GAP_S):  # the test is over
                    return
                try:
                    self.wfile.write(answer[index : index + 1])
                    self.wfile.flush()
                except OSError:  # the sender cut the connection
                    return
            self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            del format, args

    return Handler


@contextmanager
def running_receiver(default: int = 200) -> Iterator[Receiver]:
    receiver = Receiver(default)
    thread = threading.Thread(target=receiver.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.release.set()
        receiver.server.shutdown()
        receiver.server.server_close()
        thread.join()


def verify(secret: str, received: Received) -> bool:
    """Whether the request carries a valid `v1` signature by `secret` (whsec_<base64>)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = b".".join(
        [
            received.headers["webhook-id"].encode(),
            received.headers["webhook-timestamp"].encode(),
            received.body,
        ]
    )
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(
        hmac.compare_digest(expected, candidate)
        for candidate in received.headers["webhook-signature"].split(" ")
    )
