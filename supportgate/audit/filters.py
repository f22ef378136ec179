"""What `GET /v1/audit` filters on, checked: a bad value is a UsageError naming the parameter."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from supportgate.errors import UsageError
from supportgate.manifests.decision import MANIFEST_KINDS as KINDS
from supportgate.manifests.decision import VERDICTS
from supportgate.pagination import check_choice, decode_cursor

FORMATS = ("json", "csv")
MAX_SEQ = 2**63 - 1  # a BIGINT; a larger cursor would be a database error, not a 400

_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """Decisions that match every given field; None matches anything.

    `rule`: a violation with that rule id (any severity). `since` is inclusive and `until`
    exclusive, both on `evaluated_at`.
    """

    kind: str | None = None
    name: str | None = None
    verdict: str | None = None
    rule: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    matrix_version: str | None = None

    @classmethod
    def parse(
        cls,
        *,
        kind: str | None = None,
        name: str | None = None,
        verdict: str | None = None,
        rule: str | None = None,
        since: str | None = None,
        until: str | None = None,
        matrix_version: str | None = None,
    ) -> AuditFilter:
        """The filter for the query parameters as given (text), or a UsageError naming one."""
        check_choice("kind", kind, KINDS)
        check_choice("verdict", verdict, VERDICTS)
        start = parse_time("since", since)
        end = parse_time("until", until)
        if start is not None and end is not None and end < start:
            raise UsageError(f"must not be before since ({since}), got {until!r}", field="until")
        return cls(
            kind=kind,
            name=name,
            verdict=verdict,
            rule=rule,
            since=start,
            until=end,
            matrix_version=matrix_version,
        )


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


def parse_format(value: str) -> str:
    check_choice("format", value, FORMATS)
    return value


def decode_seq_cursor(cursor: str | None) -> int | None:
    """The seq a page cursor continues before, or None for the first page."""
    if cursor is None:
        return None
    seq = int(decode_cursor(cursor, int)[0])
    if not 1 <= seq <= MAX_SEQ:
        raise UsageError("not a cursor this endpoint gave out", field="cursor")
    return seq
