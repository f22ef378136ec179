"""Opaque keyset cursors (the last item's sort key, base64url JSON) and the checks of the query
values the listings share, each a UsageError naming its parameter. A forged cursor is refused
too where the databases could not compare its values (SQLite raises OverflowError beyond 64
bits; PostgreSQL refuses text with NUL).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import msgspec

from supportgate.errors import UsageError

T = TypeVar("T")
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
MAX_SEQ = _INT64_MAX  # a BIGINT; a larger cursor would be a database error, not a 400
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)


def trim_page(
    rows: Sequence[T], limit: int, key: Callable[[T], list[Any]]
) -> tuple[list[T], str | None]:
    """A page read with `limit + 1` rows: its first `limit`, and the cursor after them."""
    page = list(rows[:limit])
    if len(rows) <= limit:
        return page, None
    return page, base64.urlsafe_b64encode(msgspec.json.encode(key(page[-1]))).decode().rstrip("=")


def decode_cursor(cursor: str, *types: type) -> list[Any]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        key = msgspec.json.decode(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, msgspec.DecodeError):
        key = None
    if (
        not isinstance(key, list)
        or len(key) != len(types)
        or not all(type(value) is expected for value, expected in zip(key, types, strict=True))
        or not all(map(_storable, key))
    ):
        raise UsageError("not a cursor this endpoint gave out", field="cursor")
    return key


def _storable(value: object) -> bool:
    if isinstance(value, int):
        return _INT64_MIN <= value <= _INT64_MAX
    return not isinstance(value, str) or "\x00" not in value


def check_choice(field: str, value: str | None, choices: tuple[str, ...]) -> None:
    if value is not None and value not in choices:
        raise UsageError(f"must be one of {', '.join(choices)}, got {value!r}", field=field)


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"must be between 1 and {MAX_LIMIT}, got {limit}", field="limit")
    return limit


def decode_seq_cursor(cursor: str | None) -> int | None:
    """None for the first page: no cursor, or an empty `cursor=`."""
    if not cursor:
        return None
    seq = int(decode_cursor(cursor, int)[0])
    if not 1 <= seq <= MAX_SEQ:
        raise UsageError("not a cursor this endpoint gave out", field="cursor")
    return seq


def parse_time(field: str, text: str | None) -> datetime | None:
    """An RFC 3339 date-time with a time zone (`2026-11-30T00:00:00Z`), as an aware UTC time."""
    if text is None:
        return None
    if not _RFC3339.fullmatch(text):
        hint = " (send `+` as %2B in a URL)" if " " in text and "+" not in text else ""
        raise UsageError(
            f"not an RFC 3339 date-time with a time zone, such as "
            f"2026-11-30T00:00:00Z{hint}: {text!r}",
            field=field,
        )
    try:  # digits beyond microseconds are dropped
        return datetime.fromisoformat(text.upper()).astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise UsageError(f"not a valid date-time ({exc}): {text!r}", field=field) from None
