"""structlog, configured once: JSON lines to stdout in production, console on a terminal.
structlog's events go through the stdlib logger of their name, so they and the stdlib's
records (uvicorn, APScheduler, alembic) are written by one handler, whose lock keeps lines
whole. A line that cannot be written is lost and counted, never the caller's work (docs/ledger.md,
"The log never stops a write")."""

from __future__ import annotations

import base64
import logging
import os
import sys
from typing import Any, TextIO

import orjson
import structlog

# Every field a JSON value: times as RFC 3339 (a naive one is UTC, as every supportgate time
# is), NaN as null, bytes as base64, anything else orjson cannot write as its str().
_OPTIONS = orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z | orjson.OPT_NON_STR_KEYS


def _fallback(value: Any) -> Any:
    return base64.b64encode(value).decode() if isinstance(value, bytes) else str(value)


def _json_line(event: dict[str, Any], **_renderer_options: Any) -> str:
    return orjson.dumps(event, default=_fallback, option=_OPTIONS).decode()


_lost = {"total": 0, "unreported": 0}  # changed under the handler's lock


def lost_log_lines() -> int:
    return _lost["total"]


class _Unbuffered:
    """A text stream written straight to its file descriptor: a line the disk has no room for
    is lost there and then, not kept in a buffer that a later flush may or may not write."""

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


class _LineHandler(logging.StreamHandler):  # type: ignore[type-arg]
    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.stream.write(self.format(record) + self.terminator)
        except (OSError, ValueError):  # not a traceback on stderr, often on the same full disk
            _lost["total"] += 1
            _lost["unreported"] += 1
            return
        except Exception:  # logging's own way for a record that cannot be formatted
            self.handleError(record)
            return
        lost, _lost["unreported"] = _lost["unreported"], 0
        if lost:
            get_logger(__name__).warning("log_lines_lost", lost=lost)


def configure_logging(*, json: bool | None = None) -> None:
    """`json=None` picks JSON unless stdout is a terminal."""
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
        processors=[
            *shared,
            structlog.processors.format_exc_info,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.stdlib.LoggerFactory(),
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
    root.setLevel(logging.INFO)
    # APScheduler logs two INFO lines at every run of every job (the sweep tick runs every
    # 10 s); supportgate logs what its jobs do. Its warnings and errors still come through.
    logging.getLogger("apscheduler").setLevel(logging.WARNING)


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
