"""How long a key lives: `90d`, `12h`, `30m` (a whole number and a unit), at most MAX_DAYS."""

from __future__ import annotations

import re
from datetime import timedelta

from supportgate.errors import UsageError

MAX_DAYS = 3650
_DURATION = re.compile(r"([0-9]{1,7})([dhm])")
_UNIT = {"d": timedelta(days=1), "h": timedelta(hours=1), "m": timedelta(minutes=1)}
DURATION_PATTERN = r"^[0-9]{1,7}[dhm]$"


def parse_duration(text: str, *, field: str) -> timedelta:
    """`text` as a positive timedelta of at most MAX_DAYS; UsageError naming `field`."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise UsageError(
            f"{text!r} is not a duration: a whole number and d, h or m (`90d`, `12h`)",
            field=field,
        )
    duration = int(match.group(1)) * _UNIT[match.group(2)]
    if not timedelta(0) < duration <= timedelta(days=MAX_DAYS):
        raise UsageError(f"must be more than 0 and at most {MAX_DAYS}d, got {text}", field=field)
    return duration
