"""structlog, configured once: JSON lines to stdout in production, console on a terminal.

Events are key/value, never f-strings: `log.info("decision_recorded", manifest=..., verdict=...)`.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog


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
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(sys.stdout),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=shared,
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
