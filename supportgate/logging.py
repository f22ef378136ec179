"""structlog, configured once: JSON lines to stdout in production, console on a terminal.

Events are key/value, never f-strings: `log.info("decision_recorded", manifest=..., verdict=...)`.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from datetime import UTC, datetime
from typing import Any, TextIO

import msgspec
import structlog

# structlog's events and stdlib records (uvicorn, APScheduler, alembic) go to the same stdout
# from many threads; one lock around each whole line keeps two lines from interleaving.
_LINE_LOCK = threading.RLock()
_lost = {"total": 0, "unreported": 0}
"""Lines that could not be written (a full disk, a closed stdout), under _LINE_LOCK."""


def lost_log_lines() -> int:
    """Lines this process could not write (/metrics: supportgate_log_lines_lost_total)."""
    return _lost["total"]


def _line_lost() -> None:
    with _LINE_LOCK:
        _lost["total"] += 1
        _lost["unreported"] += 1


class _Unbuffered:
    """A text stream written straight to its file descriptor, line by line: a line the disk
    has no room for is lost there and then (and counted), not kept in a buffer that a later
    flush may or may not write."""

    def __init__(self, file: TextIO) -> None:
        self._file = file
        try:
            file.flush()
            self._fd: int | None = file.fileno()
        except (OSError, ValueError):  # no descriptor (a test's StringIO): its own write
            self._fd = None
        self._encoding = getattr(file, "encoding", None) or "utf-8"

    def write(self, text: str) -> None:
        if self._fd is None:
            self._file.write(text)
            self._file.flush()
            return
        data = text.encode(self._encoding, "backslashreplace")
        while data:  # a short write leaves the rest for the next call, which may raise
            data = data[os.write(self._fd, data) :]

    def flush(self) -> None:
        """Nothing is held back."""


class _LineWriter:
    """structlog's output: each rendered event written as one line under the shared lock; the
    first line written after lost ones is followed by a `log_lines_lost` event counting them."""

    def __init__(self, file: _Unbuffered) -> None:
        self._file = file

    def msg(self, message: str) -> None:
        with _LINE_LOCK:
            try:
                self._file.write(message + "\n")
            except (OSError, ValueError):  # the line is lost, never the caller's work (the
                _line_lost()  # ledger's writer logs as it answers)
                return
            lost, _lost["unreported"] = _lost["unreported"], 0
        if lost:
            get_logger(__name__).warning("log_lines_lost", lost=lost)

    log = debug = info = warn = warning = error = critical = exception = fatal = msg


# msgspec writes what the json module would repr into a string: datetimes as RFC 3339 text
# (UTC as `Z`), dates and times ISO 8601, Decimals and UUIDs as strings, bytes as base64,
# NaN as null (json.dumps writes `NaN`, which is not JSON). Anything else: its str().
_JSON = msgspec.json.Encoder(enc_hook=str)


def _aware(value: Any) -> Any:
    """`value` with each naive datetime in it taken as UTC.

    msgspec writes a naive datetime without an offset, which is not RFC 3339. supportgate's
    times are UTC throughout (UTCDateTime in the database, the timestamps structlog adds), so
    a naive one is UTC, not the machine's local time, and is written with `Z`. Text and
    numbers, nearly every field of nearly every event, are passed over at once (every
    request logs an event: the isinstance chain took 10 µs of its 34).
    """
    kind = type(value)
    if kind in _SCALARS:
        return value
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value
    if isinstance(value, dict):
        return {key: _aware(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_aware(item) for item in value]
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _json_line(event: dict[str, Any], **_renderer_options: Any) -> str:
    """An event as one line of JSON whose every field is a JSON value."""
    return _JSON.encode(_aware(event)).decode()


class _LineHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The stdlib handler, taking the same lock as _LineWriter."""

    def createLock(self) -> None:  # noqa: N802 - logging's name
        self.lock = _LINE_LOCK

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        if isinstance(sys.exc_info()[1], OSError | ValueError):
            _line_lost()  # not a traceback on stderr, which is often on the same full disk
        else:
            super().handleError(record)


def configure_logging(*, json: bool | None = None, level: int = logging.INFO) -> None:
    """Set up structlog and route stdlib logging (uvicorn, alembic) through the same renderer.

    `json=None` picks JSON unless stdout is a terminal.
    """
    as_json = (not sys.stdout.isatty()) if json is None else json
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: Any = (
        structlog.processors.JSONRenderer(serializer=_json_line)
        if as_json
        else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=lambda *_args: _LineWriter(_Unbuffered(sys.stdout)),
        cache_logger_on_first_use=True,
    )
    handler = _LineHandler(_Unbuffered(sys.stdout))
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=shared,
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    # APScheduler logs two INFO lines at every run of every job (the sweep tick runs every
    # 10 s); supportgate logs what its jobs do. Its warnings and errors still come through.
    logging.getLogger("apscheduler").setLevel(max(level, logging.WARNING))


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
