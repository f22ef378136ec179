"""Times as the console shows them: to the second (truncated, never rounded: a time shown is
never later than the time recorded), in UTC on the server; static/console.js rewrites a
`<time>` into the viewer's zone (docs/console.md). `utc_text` is for where an element cannot
go (an `<option>`, an SVG title).
"""

from __future__ import annotations

from datetime import UTC, datetime

from markupsafe import Markup, escape


def utc_text(moment: datetime) -> str:
    """`2026-11-30 12:00:05 UTC`; refuses a naive datetime (no zone to read it in)."""
    return f"{_utc(moment):%Y-%m-%d %H:%M:%S} UTC"


def time_element(moment: datetime | None) -> Markup:
    """The `<time>` element of `moment` (None: a dash)."""
    if moment is None:
        return Markup("—")
    text = utc_text(moment)
    iso = f"{_utc(moment):%Y-%m-%dT%H:%M:%S}Z"
    return Markup('<time datetime="{}" title="{}">{}</time>').format(iso, escape(text), text)


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("a time shown must carry a time zone")
    return moment.astimezone(UTC).replace(microsecond=0)
