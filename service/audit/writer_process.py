"""The decision writer in a process of its own, so its work runs beside the request loop.

The thread writer (recorder.DecisionRecorder) shares the interpreter lock with the event loop:
while requests are evaluated, every step of a group commit (building rows, hashing, each
round trip to PostgreSQL) waits its turn, and the writer, not the CPU, sets the pace. Here the
same group commits (`write_group`) run in a child process with its own interpreter and
connection; the service hands it records over a pipe and resolves each request's future
when the child reports the commit.

Parent: `submit` queues; a sender thread sends whatever is queued as one message; a receiver
thread resolves the futures from the child's replies. Child: reads messages (up to a batch),
appends them in one transaction, replies with one outcome per record. A 201 still means
committed. If the child dies, every record it held fails (503: the request may be retried)
and a new child is started; records it did not confirm are never reported as written.
Sweeps keep appending in their own thread (`write`), under the same audit-head lock.
"""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Literal

import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from service.errors import DatabaseError
from service.evaluations.evaluator import Evaluation
from service.logging import configure_logging, get_logger
from service.manifests.decision import Decision
from service.policy.inputs import PolicyInput

from .recorder import (
    MAX_BATCH,
    DecisionRecorder,
    IdempotencyConflict,
    IdempotentResponse,
    Record,
    Tracking,
    _Pending,
    settle,
    write_group,
)

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
DATABASE_URL_VARIABLE = "SUPPORTGATE_DATABASE_URL"
log = get_logger(__name__)

Outcome = Literal["ok", "conflict", "failed"]


class _WireRecord(msgspec.Struct, array_like=True):
    token: int
    decision: Decision
    policy_input: bytes
    tracking: Tracking | None
    idempotency: IdempotentResponse | None


class _Reply(msgspec.Struct, array_like=True):
    token: int
    outcome: Outcome
    message: str = ""


# JSON, not msgpack: a manifest may hold integers beyond 64 bits, which JSON columns take.
_records = msgspec.json.Encoder()
_records_in = msgspec.json.Decoder(list[_WireRecord])
_replies_in = msgspec.json.Decoder(list[_Reply])
_STOP = b""
_READY = b"ready"


class WriterProcessEnded(DatabaseError):
    """The writer process ended before it confirmed the record (nothing is known written)."""


class ProcessDecisionRecorder(DecisionRecorder):
    """DecisionRecorder whose group commits run in a child process (see the module doc)."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        database_url: str,
        *,
        max_batch: int = MAX_BATCH,
        on_recorded: Callable[[Decision], None] = lambda _decision: None,
    ) -> None:
        super().__init__(sessions, max_batch=max_batch, on_recorded=on_recorded)
        self._database_url = database_url
        self._waiting: dict[int, _Pending] = {}
        self._waiting_lock = threading.Lock()
        self._tokens = itertools.count()
        self._child: _Child | None = None
        self._receiver: threading.Thread | None = None
        self._stopping = False

    def start(self) -> None:
        if self._thread is None:
            self._stopping = False
            self._child = _Child.spawn(self._database_url, self._max_batch)
            self._thread = threading.Thread(target=self._send, name="decision-sender", daemon=True)
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

    def _send(self) -> None:
        ending = False
        while not ending:
            pending: list[_Pending] = []
            item = self._queue.get()
            while item is not None:
                pending.append(item)
                if len(pending) >= self._max_batch or self._queue.empty():
                    break
                item = self._queue.get_nowait()
            ending = item is None
            if pending:
                try:
                    self._send_records(pending)
                except Exception as exc:  # the sender must outlive any one batch
                    log.exception("decisions_not_sent", count=len(pending))
                    self._fail_with(pending, exc)
        child = self._child
        if child is not None:
            child.send(_STOP)

    def _send_records(self, pending: list[_Pending]) -> None:
        """One message of the records that encode; one that does not fails alone."""
        sent: dict[int, _Pending] = {}
        parts: list[bytes] = []
        for item in pending:
            token = next(self._tokens)
            try:
                parts.append(_records.encode(_wire(token, item.record)))
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
            for replies in child.replies():
                self._resolve(replies)
            child.close()
            self._child_ended(child)

        self._receiver = threading.Thread(target=receive, name="decision-receiver", daemon=True)
        self._receiver.start()

    def _resolve(self, replies: list[_Reply]) -> None:
        with self._waiting_lock:
            resolved = [(reply, self._waiting.pop(reply.token, None)) for reply in replies]
        outcomes = [(pending, _failure(reply)) for reply, pending in resolved if pending]
        self._recorded([pending.record for pending, failure in outcomes if failure is None])
        settle(outcomes)

    def _child_ended(self, child: _Child) -> None:
        with self._waiting_lock:
            tokens = list(self._waiting)
        self._fail(tokens)
        if self._stopping or self._child is not child:
            return
        log.error("decision_writer_process_ended", exitcode=child.exitcode)
        self._child = _Child.spawn(self._database_url, self._max_batch)
        self._receive_from(self._child)

    def _fail_with(self, pending: list[_Pending], exc: Exception) -> None:
        with self._waiting_lock:
            for token, waiting in list(self._waiting.items()):
                if waiting in pending:
                    del self._waiting[token]
        settle((item, exc) for item in pending)

    def _fail(self, tokens: list[int]) -> None:
        with self._waiting_lock:
            failed = [self._waiting.pop(token) for token in tokens if token in self._waiting]
        settle(
            (pending, WriterProcessEnded("the decision writer process ended; nothing was recorded"))
            for pending in failed
        )


class _Child:
    """One writer process (`python -m service.audit.writer_process`) and our end of its socket."""

    def __init__(self, process: subprocess.Popen[bytes], connection: Connection) -> None:
        self._process = process
        self._connection = connection
        self._send_lock = threading.Lock()

    @classmethod
    def spawn(cls, database_url: str, max_batch: int) -> _Child:
        ours, theirs = socket.socketpair()
        process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(theirs.fileno()), str(max_batch)],
            pass_fds=[theirs.fileno()],
            env={**os.environ, DATABASE_URL_VARIABLE: database_url},  # not argv: a password
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        connection = Connection(ours.detach())
        if not connection.poll(START_TIMEOUT_S) or connection.recv_bytes() != _READY:
            process.kill()
            raise DatabaseError("the decision writer process did not start")
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

    def replies(self) -> Iterator[list[_Reply]]:
        """The child's replies until it ends."""
        while True:
            try:
                message = self._connection.recv_bytes()
            except (EOFError, OSError):
                return
            yield _replies_in.decode(message)

    def close(self) -> None:
        self._connection.close()

    def join(self) -> None:
        """Wait for the child to end (it ends after its replies; the receiver reads them); one
        that does not end in STOP_TIMEOUT_S is killed (what it held fails, as on a crash)."""
        try:
            self._process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            log.warning("decision_writer_process_killed", pid=self._process.pid)
            self._process.kill()
            self._process.wait()


def _wire(token: int, record: Record) -> _WireRecord:
    return _WireRecord(
        token=token,
        decision=record.evaluation.decision,
        policy_input=record.evaluation.policy_input.canonical,
        tracking=record.tracking,
        idempotency=record.idempotency,
    )


def _record(wire: _WireRecord) -> Record:
    policy_input = PolicyInput(
        document=msgspec.json.decode(wire.policy_input),
        canonical=wire.policy_input,
        digest=wire.decision.input_digest,
    )
    return Record(
        evaluation=Evaluation(decision=wire.decision, policy_input=policy_input),
        tracking=wire.tracking,
        idempotency=wire.idempotency,
    )


def run_writer(database_url: str, connection: Connection, max_batch: int) -> None:
    """The child: append what the parent sends until it says stop or goes away."""
    from service.db import create_db_engine, session_factory  # noqa: PLC0415 - child only

    db = create_db_engine(database_url)
    sessions = session_factory(db)
    connection.send_bytes(_READY)
    replies = msgspec.json.Encoder()
    stopping = False
    try:
        while not stopping:
            try:
                message = connection.recv_bytes()
            except (EOFError, OSError):
                return  # the service is gone
            wire: list[_WireRecord] = []
            while True:
                if message == _STOP:
                    stopping = True
                    break
                wire.extend(_records_in.decode(message))
                if len(wire) >= max_batch or not connection.poll():
                    break
                message = connection.recv_bytes()
            if wire:
                connection.send_bytes(replies.encode(_write(sessions, wire)))
    finally:
        db.dispose()


def _write(sessions: sessionmaker[Session], wire: list[_WireRecord]) -> list[_Reply]:
    failures = write_group(sessions, [_record(item) for item in wire])
    return [_reply(item.token, failure) for item, failure in zip(wire, failures, strict=True)]


def _failure(reply: _Reply) -> Exception | None:
    """What a reply tells the waiting request: None (written) or why not."""
    if reply.outcome == "ok":
        return None
    if reply.outcome == "conflict":
        return IdempotencyConflict(reply.message)
    return DatabaseError(reply.message)


def _reply(token: int, failure: Exception | None) -> _Reply:
    if failure is None:
        return _Reply(token=token, outcome="ok")
    if isinstance(failure, IdempotencyConflict):
        return _Reply(token=token, outcome="conflict", message=str(failure))
    return _Reply(token=token, outcome="failed", message=f"the database failed: {failure}")


if __name__ == "__main__":
    configure_logging()
    run_writer(os.environ[DATABASE_URL_VARIABLE], Connection(int(sys.argv[1])), int(sys.argv[2]))
