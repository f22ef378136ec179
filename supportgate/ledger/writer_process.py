"""The ledger's writer in a process of its own, so that its work runs beside the request loop.

The writer thread (writer.LedgerWriter) shares the interpreter lock with the event loop:
while requests are evaluated, every step of a group commit (building rows, hashing, each
round trip to PostgreSQL) waits its turn, and the writer, not the CPU, sets the pace. Here the
same code (`commit_group`, `apply_alone`: write.apply_batch) runs in a child process with
its own interpreter and connection. Only data crosses the socket, as JSON: decisions and
batches (ledger/batches.py) one way, outcomes and events the other.

Parent: `submit` queues; `append` (the event loop's) queues the decisions of one turn of the
loop together, at its end; a sender thread sends whatever is queued as one message; a receiver
thread takes each commit's message, publishes its events (here, never in the child) and then
resolves the futures. Child: reads messages (up to a batch), commits the decisions gathered
as one group, and each Batch (`write`) alone, in order, and answers one message per commit.
A 201 still means committed. If the child dies, everything it held fails (503: the request
may be retried) and a new child is started; what it did not confirm is never reported as
written.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from datetime import datetime
from multiprocessing.connection import Connection
from typing import Literal

import msgspec
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.config import DatabaseTimeouts
from supportgate.db.engine import busy_error
from supportgate.errors import DatabaseBusy, DatabaseError
from supportgate.events import Event, Events
from supportgate.logging import configure_logging, get_logger

from .batches import Applied, Batch, DecisionWrite
from .log import TreeEdge
from .writer import (
    MAX_BATCH,
    IdempotencyConflict,
    LedgerWriter,
    Pending,
    Position,
    apply_alone,
    commit_group,
    settle,
)

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
DATABASE_URL_VARIABLE = "SUPPORTGATE_DATABASE_URL"
log = get_logger(__name__)

Outcome = Literal["ok", "conflict", "busy", "failed"]


class _Request(msgspec.Struct, array_like=True):
    """A decision to commit with the others gathered (`write`), or a batch to apply alone;
    `at`: the parent's clock when it was sent (a group is recorded at its latest `at`)."""

    token: int
    at: datetime
    write: DecisionWrite | None = None
    batch: Batch | None = None


class _Reply(msgspec.Struct, array_like=True):
    token: int
    outcome: Outcome
    message: str = ""
    position: Position = None
    applied: Applied | None = None
    """A batch's result (a decision's is its position)."""


class _Commit(msgspec.Struct, array_like=True):
    """What one transaction of the child did: a reply per request, and its events."""

    replies: list[_Reply]
    events: list[Event]


# JSON, not msgpack: a manifest may hold integers beyond 64 bits, which JSON columns take.
_encoder = msgspec.json.Encoder()
_requests_in = msgspec.json.Decoder(list[_Request])
_commit_in = msgspec.json.Decoder(_Commit)
_STOP = b""
_READY = b"ready"


class WriterProcessEnded(DatabaseError):
    """The writer process ended before it confirmed the write (nothing is known written)."""


class ProcessLedgerWriter(LedgerWriter):
    """LedgerWriter whose commits run in a child process (see the module doc)."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        database_url: str,
        *,
        events: Events,
        timeouts: DatabaseTimeouts,
        clock: Clock = SYSTEM_CLOCK,
        max_batch: int = MAX_BATCH,
    ) -> None:
        super().__init__(sessions, events=events, clock=clock, max_batch=max_batch)
        self._database_url = database_url
        self._timeouts = timeouts
        self._waiting: dict[int, Pending] = {}
        self._batches: dict[int, Future[Applied]] = {}
        self._waiting_lock = threading.Lock()
        self._tokens = itertools.count()
        self._child: _Child | None = None
        self._receiver: threading.Thread | None = None
        self._stopping = False
        self._this_turn: dict[asyncio.AbstractEventLoop, list[Pending]] = {}

    def start(self) -> None:
        if self._thread is None:
            self._stopping = False
            self._child = _Child.spawn(self._database_url, self._timeouts, self._max_batch)
            self._thread = threading.Thread(target=self._send, name="ledger-sender", daemon=True)
            self._thread.start()
            self._receive_from(self._child)

    def stop(self) -> None:
        """Send what is queued, let the child write it, then end both."""
        if self._thread is not None:
            self._stopping = True
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        if self._child is not None:
            self._child.join()
            self._child = None
        if self._receiver is not None:
            self._receiver.join()
            self._receiver = None

    def check_ready(self) -> None:
        child = self._child
        if self.running and (child is None or child.exitcode is not None):
            raise WriterProcessEnded("the ledger's writer process is not running")
        super().check_ready()

    async def append(self, write: DecisionWrite) -> Position:
        """As LedgerWriter.append, but queued at the end of this turn of the event loop with
        the other decisions handed over in it. Queued one at a time, each woke the sender,
        which took the interpreter lock whenever the loop let go of it (each response's
        socket write) and sent nearly every decision in a message of its own: 1.6 decisions
        a message at 64 connections (docs/speed-history.md). Queued in one go, with no
        let-go in between, they are sent together."""
        if self._thread is None:
            return await super().append(write)  # refused: not running
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Position] = loop.create_future()
        this_turn = self._this_turn.get(loop)
        if this_turn is None:
            this_turn = self._this_turn[loop] = []
            loop.call_soon(self._queue_turn, loop)
        this_turn.append(Pending(write, future))
        return await future

    def _queue_turn(self, loop: asyncio.AbstractEventLoop) -> None:
        for pending in self._this_turn.pop(loop):
            self._queue.put(pending)

    def write(self, batch: Batch) -> Applied:
        """Apply the batch in the writer process and wait (its events are published when
        this returns); in this thread when the writer is not running (a CLI run)."""
        child = self._child
        if child is None or self._stopping:
            return super().write(batch)
        token = next(self._tokens)
        future: Future[Applied] = Future()
        with self._waiting_lock:
            self._batches[token] = future
        request = _Request(token=token, at=self._clock.now(), batch=batch)
        if not child.send(_encoder.encode([request])):
            self._fail([token])
        return future.result()

    def _send(self) -> None:
        ending = False
        while not ending:
            pending: list[Pending] = []
            item = self._queue.get()
            while item is not None:
                pending.append(item)
                if len(pending) >= self._max_batch or self._queue.empty():
                    break
                item = self._queue.get_nowait()
            ending = item is None
            if pending:
                try:
                    self._send_writes(pending)
                except Exception as exc:  # the sender must outlive any one group
                    log.exception("decisions_not_sent", count=len(pending))
                    self._fail_with(pending, exc)
        child = self._child
        if child is not None:
            child.send(_STOP)

    def _send_writes(self, pending: list[Pending]) -> None:
        """One message of the decisions that encode; one that does not fails alone."""
        sent: dict[int, Pending] = {}
        parts: list[bytes] = []
        at = self._clock.now()
        for item in pending:
            token = next(self._tokens)
            try:
                parts.append(_encoder.encode(_Request(token=token, at=at, write=item.write)))
            except (TypeError, ValueError, OverflowError) as exc:
                settle([(item, exc)])
                continue
            sent[token] = item
        if not sent:
            return
        with self._waiting_lock:
            self._waiting.update(sent)
        child = self._child
        if child is None or not child.send(b"[" + b",".join(parts) + b"]"):
            self._fail(list(sent))

    def _receive_from(self, child: _Child) -> None:
        def receive() -> None:
            try:
                for commit in child.commits():
                    self._events.publish(commit.events)
                    self._resolve(commit.replies)
            finally:  # whatever ended it: what waits fails, and a new child takes over
                child.close()
                self._child_ended(child)

        self._receiver = threading.Thread(target=receive, name="ledger-receiver", daemon=True)
        self._receiver.start()

    def _resolve(self, replies: list[_Reply]) -> None:
        with self._waiting_lock:
            decisions = [(reply, self._waiting.pop(reply.token, None)) for reply in replies]
            batches = [(reply, self._batches.pop(reply.token, None)) for reply in replies]
        self._note(_outcome(reply) for reply in replies)
        for reply, batch in batches:
            if batch is not None:
                failure = _failure(reply)
                if failure is not None:
                    batch.set_exception(failure)
                elif reply.applied is not None:
                    batch.set_result(reply.applied)
        settle((pending, _outcome(reply)) for reply, pending in decisions if pending is not None)

    def _child_ended(self, child: _Child) -> None:
        with self._waiting_lock:
            tokens = [*self._waiting, *self._batches]
        self._fail(tokens)
        if self._stopping or self._child is not child:
            return
        log.error("ledger_writer_process_ended", exitcode=child.exitcode)
        self._child = _Child.spawn(self._database_url, self._timeouts, self._max_batch)
        self._receive_from(self._child)

    def _fail_with(self, pending: list[Pending], exc: Exception) -> None:
        with self._waiting_lock:
            for token, waiting in list(self._waiting.items()):
                if waiting in pending:
                    del self._waiting[token]
        settle((item, exc) for item in pending)

    def _fail(self, tokens: list[int]) -> None:
        with self._waiting_lock:
            failed = [self._waiting.pop(token) for token in tokens if token in self._waiting]
            batches = [self._batches.pop(token) for token in tokens if token in self._batches]
        ended = "the ledger's writer process ended; nothing was recorded"
        if failed or batches:
            self._note([WriterProcessEnded(ended)])
        settle((pending, WriterProcessEnded(ended)) for pending in failed)
        for batch in batches:
            batch.set_exception(WriterProcessEnded(ended))


class _Child:
    """One writer process (`python -m supportgate.ledger.writer_process`), our end of its
    socket."""

    def __init__(self, process: subprocess.Popen[bytes], connection: Connection) -> None:
        self._process = process
        self._connection = connection
        self._send_lock = threading.Lock()

    @classmethod
    def spawn(cls, database_url: str, timeouts: DatabaseTimeouts, max_batch: int) -> _Child:
        ours, theirs = socket.socketpair()
        timeout_args = [str(timeouts.statement), str(timeouts.lock)]
        process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(theirs.fileno()), str(max_batch), *timeout_args],
            pass_fds=[theirs.fileno()],
            env={**os.environ, DATABASE_URL_VARIABLE: database_url},  # not argv: a password
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        connection = Connection(ours.detach())
        if not connection.poll(START_TIMEOUT_S) or connection.recv_bytes() != _READY:
            process.kill()
            raise DatabaseError("the ledger's writer process did not start")
        return cls(process, connection)

    @property
    def exitcode(self) -> int | None:
        return self._process.poll()

    def send(self, message: bytes) -> bool:
        """False when the child is gone."""
        try:
            with self._send_lock:
                self._connection.send_bytes(message)
        except (OSError, ValueError):
            return False
        return True

    def commits(self) -> Iterator[_Commit]:
        """The child's messages until it ends."""
        while True:
            try:
                message = self._connection.recv_bytes()
            except (EOFError, OSError):
                return
            yield _commit_in.decode(message)

    def close(self) -> None:
        self._connection.close()

    def join(self) -> None:
        """Wait for the child to end (it ends after its replies; the receiver reads them); one
        that does not end in STOP_TIMEOUT_S is killed (what it held fails, as on a crash)."""
        try:
            self._process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            log.warning("ledger_writer_process_killed", pid=self._process.pid)
            self._process.kill()
            self._process.wait()


def run_writer(
    database_url: str, connection: Connection, max_batch: int, timeouts: DatabaseTimeouts
) -> None:
    """The child: apply what the parent sends until it says stop or goes away."""
    from supportgate.db import create_db_engine, session_factory  # noqa: PLC0415 - child only

    db = create_db_engine(database_url, timeouts)
    sessions = session_factory(db)
    edge = TreeEdge()
    connection.send_bytes(_READY)

    def answer(commit: _Commit) -> None:
        connection.send_bytes(_encoder.encode(commit))

    stopping = False
    try:
        while not stopping:
            try:
                message = connection.recv_bytes()
            except (EOFError, OSError):
                return  # the service is gone
            gathered: list[_Request] = []
            while True:
                if message == _STOP:
                    stopping = True
                    break
                for request in _requests_in.decode(message):
                    if request.batch is None:
                        gathered.append(request)
                        continue
                    if gathered:  # what came before it is committed first
                        answer(_commit_writes(sessions, gathered, edge))
                        gathered = []
                    answer(_apply(sessions, request.token, request.batch, request.at, edge))
                if len(gathered) >= max_batch or not connection.poll():
                    break
                message = connection.recv_bytes()
            if gathered:
                answer(_commit_writes(sessions, gathered, edge))
    finally:
        db.dispose()


def _commit_writes(
    sessions: sessionmaker[Session], requests: list[_Request], edge: TreeEdge
) -> _Commit:
    writes = [request.write for request in requests if request.write is not None]
    at = max(request.at for request in requests)
    outcomes, events = commit_group(sessions, writes, at, edge)
    return _Commit(
        replies=[
            _reply(request.token, outcome)
            for request, outcome in zip(requests, outcomes, strict=True)
        ],
        events=events,
    )


def _apply(
    sessions: sessionmaker[Session], token: int, batch: Batch, at: datetime, edge: TreeEdge
) -> _Commit:
    try:
        applied = apply_alone(sessions, batch, at, edge)
    except Exception as exc:  # the writer hears of it (a sweep pauses, to retry)
        log.exception("batch_not_recorded", decisions=len(batch.decisions))
        return _Commit(replies=[_reply(token, exc)], events=[])
    reply = _Reply(token=token, outcome="ok", applied=applied)
    return _Commit(replies=[reply], events=applied.events)


def _failure(reply: _Reply) -> Exception | None:
    """What a reply tells the waiting request: None (written) or why not."""
    if reply.outcome == "ok":
        return None
    if reply.outcome == "conflict":
        return IdempotencyConflict(reply.message)
    if reply.outcome == "busy":
        return DatabaseBusy(reply.message)
    return DatabaseError(reply.message)


def _outcome(reply: _Reply) -> Position | Exception:
    failure = _failure(reply)
    return reply.position if failure is None else failure


def _reply(token: int, outcome: Position | Exception) -> _Reply:
    if not isinstance(outcome, Exception):
        return _Reply(token=token, outcome="ok", position=outcome)
    if isinstance(outcome, IdempotencyConflict):
        return _Reply(token=token, outcome="conflict", message=str(outcome))
    busy = busy_error(outcome) if isinstance(outcome, DBAPIError) else None
    if busy is not None:
        return _Reply(token=token, outcome="busy", message=str(busy))
    return _Reply(token=token, outcome="failed", message=f"the database failed: {outcome}")


if __name__ == "__main__":
    configure_logging()
    run_writer(
        os.environ[DATABASE_URL_VARIABLE],
        Connection(int(sys.argv[1])),
        int(sys.argv[2]),
        DatabaseTimeouts(statement=float(sys.argv[3]), lock=float(sys.argv[4])),
    )
