"""The clocks: the system's is aware UTC and monotonic; the fake one moves only when told."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from supportgate.clock import SYSTEM_CLOCK, Clock
from tests.clock import FakeClock

pytestmark = pytest.mark.fast


def test_the_system_clock_is_aware_utc_and_monotonic() -> None:
    before = datetime.now(UTC)
    now = SYSTEM_CLOCK.now()
    assert now.utcoffset() == timedelta(0)
    assert before <= now <= datetime.now(UTC)
    first = SYSTEM_CLOCK.monotonic()
    assert SYSTEM_CLOCK.monotonic() >= first


def test_the_fake_clock_moves_only_when_advanced() -> None:
    start = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    fake = FakeClock(start)
    clock: Clock = fake
    assert (clock.now(), clock.now()) == (start, start)
    seconds = clock.monotonic()
    fake.advance(90)
    fake.advance(timedelta(minutes=1))
    assert clock.now() == start + timedelta(seconds=150)
    assert clock.monotonic() == seconds + 150
    with pytest.raises(ValueError, match="does not go back"):
        fake.advance(-1)
    with pytest.raises(ValueError, match="aware"):
        FakeClock(datetime(2026, 12, 1))
