"""A Clock (supportgate.clock) that moves only when a test moves it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class FakeClock:
    """Starts at `start` (default: the real time now, so stored times look sane) and at 1000.0
    monotonic seconds; `advance()` moves both together."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime.now(UTC)
        self._monotonic = 1000.0
        if self._now.utcoffset() is None:
            raise ValueError("a FakeClock's time is aware")

    def now(self) -> datetime:
        return self._now.astimezone(UTC)

    def monotonic(self) -> float:
        return self._monotonic

    def advance(self, seconds: float | timedelta) -> None:
        step = seconds.total_seconds() if isinstance(seconds, timedelta) else float(seconds)
        if step < 0:
            raise ValueError("a clock does not go back")
        self._now += timedelta(seconds=step)
        self._monotonic += step
