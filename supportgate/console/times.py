"""Times as the console shows them: to the second, in UTC on the server.

`time_element` writes `<time datetime="2026-11-30T12:00:05Z" title="2026-11-30 12:00:05
UTC">2026-11-30 12:00:05 UTC</time>`; the static script `static/console.js` rewrites the text
into the viewer's zone in the browser (only it knows the zone), and the title keeps the UTC
time on hover. Without script the page still reads to the second, in UTC. `utc_text` is the
same time as plain text, for where an element cannot go (an `<option>`, an SVG title).
Seconds are truncated, never rounded: a time shown is never later than the time recorded.
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
