"""Log lines from structlog and from stdlib loggers, written by many threads, never interleave."""

from __future__ import annotations

import io
import json
import logging
import sys
import threading
import time

import pytest
import structlog

from supportgate.logging import configure_logging, get_logger

LINES_PER_THREAD = 500


class YieldingStream(io.StringIO):
    """stdout as a busy terminal or pipe behaves: a write may let another thread run."""

    def write(self, text: str) -> int:
        time.sleep(0)
        return super().write(text)


def test_lines_from_both_kinds_of_logger_stay_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    captured = YieldingStream()
    monkeypatch.setattr(sys, "stdout", captured)
    root = logging.getLogger()
    saved = (root.handlers, root.level)
    configure_logging(json=True)
    try:
        events = get_logger("test")
        stdlib = logging.getLogger("test.stdlib")

        def from_structlog() -> None:
            for index in range(LINES_PER_THREAD):
                events.info("structlog_event", index=index)

        def from_stdlib() -> None:
            for index in range(LINES_PER_THREAD):
                stdlib.info("stdlib record %d", index)

        threads = [threading.Thread(target=t) for t in (from_structlog, from_stdlib) * 2]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        root.handlers, root.level = saved
        structlog.reset_defaults()

    lines = captured.getvalue().splitlines()
    assert len(lines) == 4 * LINES_PER_THREAD
    parsed = [json.loads(line) for line in lines]
    assert sum(1 for event in parsed if event["event"] == "structlog_event") == 2 * LINES_PER_THREAD
