"""Time as a dependency: the services that compare times ask a Clock, never the system. Tests
give a fake one they move by hand (tests/clock.py), so that expiry, staleness and schedules
are tested without sleeping.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Final, Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...

    def monotonic(self) -> float: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


SYSTEM_CLOCK: Final[Clock] = SystemClock()
