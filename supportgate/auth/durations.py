"""How long a key lives: `90d`, `12h`, `30m`: a whole number from 1 and a unit, of at most
three digits of days, four of hours or six of minutes (under 1000 days). The pattern is the
whole rule, so the API's document declares all of it."""

from __future__ import annotations

import re
from datetime import timedelta

from supportgate.errors import UsageError

DURATION_PATTERN = r"^(?:[1-9][0-9]{0,2}d|[1-9][0-9]{0,3}h|[1-9][0-9]{0,5}m)$"
_DURATION = re.compile(DURATION_PATTERN)
_UNIT = {"d": timedelta(days=1), "h": timedelta(hours=1), "m": timedelta(minutes=1)}


def parse_duration(text: str, *, field: str) -> timedelta:
    if not _DURATION.match(text):
        raise UsageError(
            f"{text!r} is not a duration: a whole number from 1 and d, h or m (`90d`, `12h`; "
            "at most 999d, 9999h or 999999m)",
            field=field,
        )
    return int(text[:-1]) * _UNIT[text[-1]]
