"""The in-process engine's evaluations in a child process, for the service: regorus holds the
interpreter lock for a whole evaluation (about 0.8 ms), so in the service's own process every
request, the ledger writer and the event loop wait for it; in a child they run beside it on
the other core (docs/performance.md, Speed devices). `EmbeddedEngine` is its plain path and
its oracle (tests/policy/test_engine_process.py).

CHILDREN children, each one request at a time over its stdin and stdout: a frame is a 4-byte
length and a msgpack array. A child compiles an engine per (policy revision, matrix key) when
asked for one it lacks, as each thread of the service would; a child that ends is started again
once.
"""

from __future__ import annotations

import os
import queue
import signal
import struct
import subprocess
import sys
from collections import OrderedDict
from collections.abc import Sequence
from typing import IO, Any, cast

import msgspec

from supportgate.errors import PolicyEngineUnavailable, PolicyEvaluationError
from supportgate.manifests.decision import PolicyResult

from .bundle import PolicyBundle
from .embedded import MAX_CACHED_ENGINES, EmbeddedEngine, compile_engine, evaluate_raw
from .engine import LoadedMatrix, sparing_org, to_result
from .inputs import PolicyInput

_LENGTH = struct.Struct(">I")
STOP_TIMEOUT_S = 5.0
_OK, _NEED, _FAILED, _UNAVAILABLE = "ok", "need", "failed", "unavailable"
# Two, not one: the thread that asked a child needs the interpreter lock to read the answer, and
# under load it waits for it with the child idle; meanwhile the other child evaluates. With one,
# POSTs were 20-23% of echo's throughput, with two 28-29% (docs/performance.md, session 33).
CHILDREN = 2


class _Child:
    """One evaluation process (started when first asked), used by one thread at a time."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None

    def converse(self, bundle: PolicyBundle, matrix: LoadedMatrix, inputs: list[bytes]) -> Any:
        if self.process is None:
            self.process = subprocess.Popen(
                [sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        pipes = cast("IO[bytes]", self.process.stdin), cast("IO[bytes]", self.process.stdout)
        question = ["eval", bundle.revision, matrix.key, inputs]
        status, answer = _exchange(*pipes, question)
        if status == _NEED:
            load = ["load", bundle.revision, bundle.modules, matrix.key, matrix.data_json()]
            status, answer = _exchange(*pipes, load)
            if status == _OK:
                status, answer = _exchange(*pipes, question)
        return status, answer

    def forget(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        try:
            cast("IO[bytes]", process.stdin).close()  # the child ends at the end of its input
            process.wait(timeout=STOP_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        cast("IO[bytes]", process.stdout).close()


class ProcessEngine:
    name = "embedded"

    def __init__(self, bundle: PolicyBundle) -> None:
        self._bundle = bundle
        self._children = [_Child() for _ in range(CHILDREN)]
        self._idle: queue.SimpleQueue[_Child] = queue.SimpleQueue()
        for child in self._children:
            self._idle.put(child)

    @property
    def policy_revision(self) -> str:
        return self._bundle.revision

    def evaluate(self, matrix: LoadedMatrix, policy_input: PolicyInput) -> PolicyResult:
        def once(item: PolicyInput) -> PolicyResult:
            [(status, text)] = self._ask(bundle, matrix, [item.canonical])
            if status != _OK:
                raise PolicyEvaluationError(text)
            return to_result(text)

        bundle = self._bundle
        return sparing_org(once, policy_input)

    def evaluate_many(
        self, matrix: LoadedMatrix, inputs: Sequence[PolicyInput]
    ) -> list[PolicyResult]:
        """In one exchange; an input that failed is evaluated again alone (`sparing_org`)."""
        answers = self._ask(self._bundle, matrix, [item.canonical for item in inputs])
        return [
            to_result(text) if status == _OK else self.evaluate(matrix, item)
            for item, (status, text) in zip(inputs, answers, strict=True)
        ]

    def check_ready(self) -> None:
        EmbeddedEngine(self._bundle).check_ready()

    def use(self, bundle: PolicyBundle, served_revision: str | None) -> None:
        """The children's engines are keyed by revision: the old ones age out of their caches."""
        self._bundle = bundle

    def close(self) -> None:
        """Each child ends once no thread uses it."""
        idle = [self._idle.get() for _ in self._children]
        for child in idle:
            child.forget()
            self._idle.put(child)

    def _ask(self, bundle: PolicyBundle, matrix: LoadedMatrix, inputs: list[bytes]) -> Any:
        """(status, text) for each input, from whichever child is idle first; a child that
        ends is replaced once."""
        child = self._idle.get()
        try:
            status, answer = child.converse(bundle, matrix, inputs)
        except _ENDED:
            child.forget()
            try:
                status, answer = child.converse(bundle, matrix, inputs)
            except _ENDED as exc:
                child.forget()
                raise PolicyEngineUnavailable(f"the evaluation process ended: {exc}") from exc
        finally:
            self._idle.put(child)
        if status == _UNAVAILABLE:
            raise PolicyEngineUnavailable(answer)
        if status != _OK:
            raise PolicyEvaluationError(answer)
        return answer


_ENDED = (OSError, EOFError, ValueError)  # a pipe closed, an answer cut short


def _exchange(requests: IO[bytes], answers: IO[bytes], message: list[Any]) -> Any:
    _write(requests, message)
    return _read(answers)


def _write(stream: IO[bytes], message: list[Any]) -> None:
    payload = msgspec.msgpack.encode(message)
    stream.write(_LENGTH.pack(len(payload)) + payload)
    stream.flush()


def _read(stream: IO[bytes]) -> Any:
    header = stream.read(_LENGTH.size)
    payload = stream.read(_LENGTH.unpack(header)[0]) if len(header) == _LENGTH.size else b""
    if not payload:
        raise EOFError("the evaluation process closed its output")
    return msgspec.msgpack.decode(payload)


def _serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """The child's loop, until its input ends."""
    engines: OrderedDict[tuple[str, str], Any] = OrderedDict()
    while True:
        try:
            message = _read(requests)
        except EOFError:
            return
        try:
            answer = _answer(engines, message)
        except PolicyEngineUnavailable as exc:
            answer = [_UNAVAILABLE, str(exc)]
        _write(answers, answer)


def _answer(engines: OrderedDict[tuple[str, str], Any], message: list[Any]) -> list[Any]:
    match message:
        case ["eval", revision, matrix_key, inputs]:
            engine = engines.get((revision, matrix_key))
            if engine is None:
                return [_NEED, ""]
            return [_OK, [_one(engine, canonical) for canonical in inputs]]
        case ["load", revision, modules, matrix_key, data_json]:
            if len(engines) >= MAX_CACHED_ENGINES:
                engines.popitem(last=False)
            engines[(revision, matrix_key)] = compile_engine(map(tuple, modules), data_json)
            return [_OK, ""]
    return [_FAILED, f"the evaluation process does not know {message[:1]}"]


def _one(engine: Any, canonical: bytes) -> list[str]:
    try:
        return [_OK, evaluate_raw(engine, canonical)]
    except PolicyEvaluationError as exc:
        return [_FAILED, str(exc)]
    except BaseException as exc:  # a Rust panic arrives as a BaseException: this input fails
        return [_FAILED, f"policy evaluation failed: {exc}"]


if __name__ == "__main__":
    # The service's Ctrl-C reaches its whole process group: the child ends with its input.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The answers get the pipe to themselves: anything printed goes to the service's stderr.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _serve(sys.stdin.buffer, answers)
