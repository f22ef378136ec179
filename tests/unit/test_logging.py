"""Log lines from structlog and from stdlib loggers, written by many threads, never interleave;
every field of a JSON line is a JSON value (times as RFC 3339 text, not a Python repr)."""

from __future__ import annotations

import io
import json
import logging
import math
import re
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest
import structlog

from supportgate.logging import configure_logging, get_logger, lost_log_lines

LINES_PER_THREAD = 500


class YieldingStream(io.StringIO):
    """stdout as a busy terminal or pipe behaves: a write may let another thread run."""

    def write(self, text: str) -> int:
        time.sleep(0)
        return super().write(text)


RFC_3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})\Z")


@contextmanager
def json_logs(monkeypatch: pytest.MonkeyPatch) -> Iterator[YieldingStream]:
    """Logging configured for JSON lines into the stream it gives; restored afterwards.

    A context manager in the test, not a fixture: pytest puts its own sys.stdout back between
    a fixture's setup and the test, and structlog's writer takes sys.stdout at first use."""
    captured = YieldingStream()
    monkeypatch.setattr(sys, "stdout", captured)
    root = logging.getLogger()
    saved = (root.handlers, root.level)
    configure_logging(json=True)
    try:
        yield captured
    finally:
        root.handlers, root.level = saved
        structlog.reset_defaults()


def test_lines_from_both_kinds_of_logger_stay_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    with json_logs(monkeypatch) as captured:
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

    lines = captured.getvalue().splitlines()
    assert len(lines) == 4 * LINES_PER_THREAD
    parsed = [json.loads(line) for line in lines]
    assert sum(1 for event in parsed if event["event"] == "structlog_event") == 2 * LINES_PER_THREAD


def test_fields_the_json_module_cannot_write_are_json_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    effective_from = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
    in_paris = datetime(2026, 12, 1, 4, 0, 0, 250000, tzinfo=timezone(timedelta(hours=1)))
    subscription = uuid.UUID("00000000-0000-4000-8000-000000000001")
    with json_logs(monkeypatch) as captured:
        get_logger("test").info(
            "matrix_published",
            effective_from=effective_from,
            in_paris=in_paris,
            price=Decimal("1.50"),
            digest=b"\x00\xff",
            subscription=subscription,
            policy_dir=Path("/srv/policies"),
            ratio=math.nan,
            error=ValueError("boom"),
        )
    (line,) = captured.getvalue().splitlines()
    event = json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))
    assert RFC_3339.match(event["effective_from"]), event
    assert datetime.fromisoformat(event["effective_from"]) == effective_from
    assert event["effective_from"].endswith("Z")
    assert RFC_3339.match(event["in_paris"]), event
    assert datetime.fromisoformat(event["in_paris"]) == in_paris
    assert RFC_3339.match(event["timestamp"]), event
    assert event["price"] == "1.50"
    assert event["digest"] == "AP8="  # base64
    assert event["subscription"] == str(subscription)
    assert event["policy_dir"] == "/srv/policies"
    assert event["ratio"] is None
    assert event["error"] == "boom"


def test_a_naive_datetime_is_written_as_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    naive = datetime(2026, 12, 1, 3, 0, 0, 500000)  # no tzinfo: the case under test
    with json_logs(monkeypatch) as captured:
        get_logger("test").info("swept", at=naive, times={"last": [naive]})
    (line,) = captured.getvalue().splitlines()
    event = json.loads(line)
    assert event["at"] == "2026-12-01T03:00:00.500000Z"
    assert RFC_3339.match(event["at"]), event
    assert event["times"] == {"last": ["2026-12-01T03:00:00.500000Z"]}


def test_the_schedulers_routine_runs_are_not_logged_but_its_failures_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """APScheduler writes two INFO lines at every run of every job (the sweep tick is every
    10 s): a served log would be mostly those. Its warnings and errors still come through."""
    executor = logging.getLogger("apscheduler.executors.default")
    saved = logging.getLogger("apscheduler").level
    try:
        with json_logs(monkeypatch) as captured:
            executor.info('Running job "SweepScheduler.tick"')
            executor.error('Job "SweepScheduler.tick" raised an exception')
    finally:
        logging.getLogger("apscheduler").setLevel(saved)
    (line,) = captured.getvalue().splitlines()
    assert json.loads(line)["event"] == 'Job "SweepScheduler.tick" raised an exception'


class FullDisk(io.StringIO):
    """stdout on a full file system: every write fails with ENOSPC until space comes back."""

    full = True

    def write(self, text: str) -> int:
        if self.full:
            raise OSError(28, "No space left on device")
        return super().write(text)


def test_a_line_that_cannot_be_written_is_counted_not_raised(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The ledger's writer logs as it answers a failed write: a log on the same full disk must
    not stop it (it did: the writer thread died and every later POST hung). The lost lines
    used to vanish without a trace: now they are counted (/metrics), and the log says how many
    it lost at the first line it can write again."""
    stream = FullDisk()
    monkeypatch.setattr(sys, "stdout", stream)
    root = logging.getLogger()
    saved = (root.handlers, root.level)
    configure_logging(json=True)
    before = lost_log_lines()
    try:
        get_logger("test").error("lost_line")
        logging.getLogger("test.stdlib").error("lost record")
        assert lost_log_lines() == before + 2
        stream.full = False
        get_logger("test").info("written_line")
        get_logger("test").info("next_line")
    finally:
        root.handlers, root.level = saved
        structlog.reset_defaults()
    written = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(event["event"], event.get("lost")) for event in written] == [
        ("written_line", None),
        ("log_lines_lost", 2),
        ("next_line", None),
    ]
    assert capfd.readouterr().err == ""  # no traceback per lost record
