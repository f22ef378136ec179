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

Sweeps (`write` with BatchHooks) send each batch as one message of its own: the child decodes
the hooks (a msgspec Struct, named by module and class) and appends the batch alone, in its
own transaction, so a sweep's writes also leave the interpreter lock its evaluation needs.
"""

from __future__ import annotations

import importlib
import itertools
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from multiprocessing.connection import Connection
from typing import Literal

import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.errors import DatabaseError
from supportgate.evaluations.evaluator import Evaluation
from supportgate.logging import configure_logging, get_logger
from supportgate.manifests.decision import Decision
from supportgate.policy.inputs import PolicyInput

from .recorder import (
    MAX_BATCH,
    BatchHooks,
    DecisionRecorder,
    IdempotencyConflict,
    IdempotentResponse,
    Record,
    Tracking,
    _Pending,
    append_records,
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


class _WireBatch(msgspec.Struct, array_like=True):
    """Records to append alone, with their BatchHooks (`hooks_type`: "module:Class")."""

    token: int
    records: list[_WireRecord]
    hooks_type: str
    hooks: msgspec.Raw


class _Reply(msgspec.Struct, array_like=True):
    token: int
    outcome: Outcome
    message: str = ""
    appended: list[int] = msgspec.field(default_factory=list)
    """For a batch: the positions of the records appended (the hooks may drop some)."""


# JSON, not msgpack: a manifest may hold integers beyond 64 bits, which JSON columns take.
_records = msgspec.json.Encoder()
_records_in = msgspec.json.Decoder(list[_WireRecord])
_batch_in = msgspec.json.Decoder(_WireBatch)
_replies_in = msgspec.json.Decoder(list[_Reply])
_STOP = b""
_READY = b"ready"
_BATCH = b"B"  # prefixes a _WireBatch message (a records message is a JSON array)


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
        self._batches: dict[int, Future[list[int]]] = {}
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

    def write(
        self, records: Sequence[Record], *, hooks: BatchHooks | None = None
    ) -> Sequence[Record]:
        """Append the batch in the writer process and wait; in this thread when the writer is
        not running (a CLI run) or the hooks are not a Struct it can decode."""
        child = self._child
        if child is None or self._stopping or not isinstance(hooks, msgspec.Struct):
            return super().write(records, hooks=hooks)
        token = next(self._tokens)
        message = _BATCH + _records.encode(
            _WireBatch(
                token=token,
                records=[_wire(index, record) for index, record in enumerate(records)],
                hooks_type=f"{type(hooks).__module__}:{type(hooks).__qualname__}",
                hooks=msgspec.Raw(_records.encode(hooks)),
            )
        )
        future: Future[list[int]] = Future()
        with self._waiting_lock:
            self._batches[token] = future
        if not child.send(message):
            self._fail([token])
        appended = [records[index] for index in future.result()]
        self._recorded(appended)
        return appended

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
            batches = [(reply, self._batches.pop(reply.token, None)) for reply in replies]
        for reply, batch in batches:
            if batch is not None:
                failure = _failure(reply)
                if failure is None:
                    batch.set_result(reply.appended)
                else:
                    batch.set_exception(failure)
        outcomes = [(pending, _failure(reply)) for reply, pending in resolved if pending]
        self._recorded([pending.record for pending, failure in outcomes if failure is None])
        settle(outcomes)

    def _child_ended(self, child: _Child) -> None:
        with self._waiting_lock:
            tokens = [*self._waiting, *self._batches]
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
            batches = [self._batches.pop(token) for token in tokens if token in self._batches]
        ended = "the decision writer process ended; nothing was recorded"
        settle((pending, WriterProcessEnded(ended)) for pending in failed)
        for batch in batches:
            batch.set_exception(WriterProcessEnded(ended))


class _Child:
    """One writer process (`python -m supportgate.audit.writer_process`), our end of its socket."""

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
    from supportgate.db import create_db_engine, session_factory  # noqa: PLC0415 - child only

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
                if message.startswith(_BATCH):  # after what was gathered before it
                    if wire:
                        connection.send_bytes(replies.encode(_write(sessions, wire)))
                        wire = []
                    reply = _write_batch(sessions, _batch_in.decode(message[len(_BATCH) :]))
                    connection.send_bytes(replies.encode([reply]))
                else:
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


def _write_batch(sessions: sessionmaker[Session], batch: _WireBatch) -> _Reply:
    records = [_record(item) for item in batch.records]
    try:
        hooks = msgspec.json.decode(batch.hooks, type=_hooks_type(batch.hooks_type))
        appended = {id(record) for record in append_records(sessions, records, hooks=hooks)}
    except Exception as exc:  # the sweep hears of it (and pauses, to retry)
        log.exception("sweep_batch_not_recorded", count=len(records))
        return _reply(batch.token, exc)
    positions = [index for index, record in enumerate(records) if id(record) in appended]
    return _Reply(token=batch.token, outcome="ok", appended=positions)


def _hooks_type(name: str) -> type[BatchHooks]:
    """The BatchHooks Struct a batch names ("module:Class"; only from our own parent)."""
    module, _, qualname = name.partition(":")
    found = getattr(importlib.import_module(module), qualname)
    if not (isinstance(found, type) and issubclass(found, msgspec.Struct)):
        raise TypeError(f"{name} is not a msgspec Struct")
    return found  # type: ignore[return-value]  # BatchHooks is structural: the sender's type


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
