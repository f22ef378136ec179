"""The connections `supportgate serve` holds, through a real server: a request head sent a
byte at a time (slowloris), a connection that sends nothing and an idle kept-alive one are
closed after their timeouts (set short here: SUPPORTGATE_HEADER_TIMEOUT,
SUPPORTGATE_KEEP_ALIVE_TIMEOUT); connections beyond SUPPORTGATE_MAX_CONNECTIONS are closed
at once, so many held connections cannot use up the file descriptors that /health/live
needs. Each waits by polling the socket up to a deadline, never by a fixed sleep."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from ..server import Served, clean_env, serving, supportgate_command

DEADLINE_S = 20.0
"""Far longer than the timeouts under test (1 s): reaching it means the server kept the
connection."""
LIMITS = {"SUPPORTGATE_HEADER_TIMEOUT": "1", "SUPPORTGATE_KEEP_ALIVE_TIMEOUT": "1"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("serve"), env=clean_env(**LIMITS)) as running:
        yield running


def _connect(served: Served) -> socket.socket:
    host, port = served.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=5)


def _closed_by_server(sock: socket.socket, *, trickle: bytes = b"") -> tuple[bool, bytes]:
    """Poll until the server closes `sock` (sending `trickle` a byte per poll); whether it
    did before the deadline, and what it sent."""
    received = b""
    deadline = time.monotonic() + DEADLINE_S
    sent = 0
    while time.monotonic() < deadline:
        if trickle:
            try:
                sock.sendall(trickle[sent % len(trickle) : sent % len(trickle) + 1])
            except OSError:  # the server closed it
                return True, received
            sent += 1
        readable, _, _ = select.select([sock], [], [], 0.1)
        if readable:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                return True, received
            if not data:
                return True, received
            received += data
    return False, received


def test_a_head_sent_a_byte_at_a_time_is_cut_off(server: Served) -> None:
    with _connect(server) as sock:
        sock.sendall(b"GET /health/live HTTP/1.1\r\nhost: supportgate\r\n")
        closed, received = _closed_by_server(sock, trickle=b"x-slow-header-that-never-ends: ")
    assert closed, "the server kept a connection whose head never ended"
    assert b"200 OK" not in received


def test_a_connection_that_sends_nothing_is_closed(server: Served) -> None:
    with _connect(server) as sock:
        closed, received = _closed_by_server(sock)
    assert closed, "the server kept a connection that sent nothing"
    assert received == b""


def test_an_idle_kept_alive_connection_is_closed(server: Served) -> None:
    with _connect(server) as sock:
        sock.sendall(b"GET /health/live HTTP/1.1\r\nhost: supportgate\r\n\r\n")
        closed, received = _closed_by_server(sock)
    assert received.startswith(b"HTTP/1.1 200 OK"), received
    assert closed, "the server kept an idle keep-alive connection"


def test_a_client_that_reads_its_answer_in_time_is_served_as_usual(server: Served) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        for _ in range(3):  # one kept-alive connection, three requests
            assert client.get("/health/live").status_code == 200


def test_health_live_answers_while_connections_are_held(tmp_path: Path) -> None:
    """300 held connections against a server with 256 file descriptors: beyond 64 they are
    closed as they come, the rest when their head is late, and /health/live answers."""
    env = clean_env(**LIMITS, SUPPORTGATE_MAX_CONNECTIONS="64")
    command = ["prlimit", "--nofile=256:256", *supportgate_command()]
    with serving(tmp_path, env=env, command=command) as served, ExitStack() as held:
        for number in range(300):
            sock = held.enter_context(_connect(served))
            if number % 2:
                sock.sendall(b"GET /health/live HTTP/1.1\r\n")  # and never the rest
        deadline = time.monotonic() + DEADLINE_S
        answered = None
        while answered is None and time.monotonic() < deadline:
            try:
                answered = httpx.get(served.url + "/health/live", timeout=1).status_code
            except httpx.TransportError:
                select.select([], [], [], 0.1)
        assert answered == 200
