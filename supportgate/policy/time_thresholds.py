"""Where the evaluation time enters a decision: the policies' time comparisons, in Python. Two
evaluation times on the same sides of every Threshold get the same decision, so a sweep's memo
keys on the first ahead (docs/reevaluation.md, The memo); tests/policies/test_time_thresholds.py
fails when the policies compare the time anywhere else. A value not read exactly as the policies
read it is UnknownTime: the caller then evaluates every time rather than guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from supportgate.errors import SupportgateError

if TYPE_CHECKING:
    from .bundle import PolicyBundle

NS_PER_DAY = 24 * 60 * 60 * 1_000_000_000
CLOCK_SKEW_NS = 5 * 60 * 1_000_000_000  # lib/evidence/evidence.rego clock_skew_ns

# The RFC 3339 times the previous policy tree's timestamp_ns admitted (its pattern and year
# range: nanoseconds since 1970 fit in int64); the policies now read validated times with
# time.parse_rfc3339_ns, which gives the same for every time Python writes.
_RFC3339 = re.compile(
    r"^(?P<year>[0-9]{4})-(?P<month>0[1-9]|1[0-2])-(?P<day>0[1-9]|[12][0-9]|3[01])"
    r"T(?P<hour>[01][0-9]|2[0-3]):(?P<minute>[0-5][0-9]):(?P<second>[0-5][0-9])"
    r"(?:\.(?P<fraction>[0-9]{1,9}))?"
    r"(?P<zone>Z|(?P<sign>[+-])(?P<zone_hour>[01][0-9]|2[0-3]):(?P<zone_minute>[0-5][0-9]))$"
)
_YEARS = range(1678, 2262)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_DAY = _EPOCH.toordinal()
_MAX_MICROSECONDS = (datetime.max.replace(tzinfo=UTC) - _EPOCH) // timedelta(microseconds=1)


class UnknownTime(SupportgateError):
    """A compared value the policies may read otherwise than this module would."""


@dataclass(frozen=True, slots=True)
class Threshold:
    kind: Literal["future", "stale", "waiver"]
    flips_at_ns: int  # since 1970

    @property
    def flips_at(self) -> datetime:
        """datetime.max beyond it (a matrix may allow evidence 2**53 - 1 days old): the
        policies compare only times up to 2261."""
        microseconds = self.flips_at_ns // 1000
        if microseconds >= _MAX_MICROSECONDS:
            return datetime.max.replace(tzinfo=UTC)
        return _EPOCH + timedelta(microseconds=microseconds)


def organisation_reads_the_time(bundle: PolicyBundle) -> bool:
    """Such a module may compare the time where none of these thresholds is, so no memo may
    rely on them under its policies."""
    return any(
        "evaluated_at" in text or "now_ns" in text
        for org in bundle.bundles
        for _, text in org.modules
    )


def thresholds(
    manifest: Mapping[str, Any], waivers: Sequence[Any], max_age_days: Any
) -> list[Threshold]:
    found = []
    for where, value in time_compared(manifest, waivers):
        moment = timestamp_ns(value)
        if where == "waiver":
            # decision.rego _active_waivers: time.parse_rfc3339_ns(expires_at) > evaluated_at_ns
            found.append(Threshold("waiver", moment))
            continue
        # lib/evidence/evidence.rego evidence.future:
        #   parse_rfc3339_ns(at) > evaluated_at_ns + clock_skew_ns
        found.append(Threshold("future", moment - CLOCK_SKEW_NS))
        if max_age_days is None:
            continue  # lib/evidence evidence.stale: is_number(max_age_days) fails, never stale
        if not isinstance(max_age_days, int) or isinstance(max_age_days, bool):
            raise UnknownTime(f"evidence_max_age_days {max_age_days!r}")
        # lib/evidence/evidence.rego evidence.stale:
        #   evaluated_at_ns - parse_rfc3339_ns(at) > max_age_days * day_ns
        found.append(Threshold("stale", moment + max_age_days * NS_PER_DAY + 1))
    return found


def time_compared(
    manifest: Mapping[str, Any], waivers: Sequence[Any]
) -> Iterator[tuple[Literal["evidence", "waiver"], Any]]:
    """An evidence part that is not an object is given whole: the policies judge it, and
    thresholds calls it unknown."""
    for waiver in waivers:
        yield "waiver", waiver.get("expires_at") if isinstance(waiver, Mapping) else waiver
    spec = manifest.get("spec")
    evidence = spec.get("evidence") if isinstance(spec, Mapping) else None
    if evidence is None:
        return
    if not isinstance(evidence, Mapping):
        yield "evidence", evidence
        return
    for item in evidence.values():
        if not isinstance(item, Mapping):
            yield "evidence", item
        elif "at" in item and item.get("status") == "passed":
            yield "evidence", item["at"]


def timestamp_ns(value: Any) -> int:
    match = _RFC3339.match(value) if isinstance(value, str) else None
    if match is None or int(match["year"]) not in _YEARS:
        raise UnknownTime(repr(value))
    try:
        day = date(int(match["year"]), int(match["month"]), int(match["day"]))
    except ValueError as exc:  # 31 April, 29 February of a common year
        raise UnknownTime(repr(value)) from exc
    seconds = (day.toordinal() - _EPOCH_DAY) * 86400
    seconds += int(match["hour"]) * 3600 + int(match["minute"]) * 60 + int(match["second"])
    if match["sign"]:
        offset = int(match["zone_hour"]) * 3600 + int(match["zone_minute"]) * 60
        seconds -= offset if match["sign"] == "+" else -offset
    fraction = (match["fraction"] or "").ljust(9, "0")
    return seconds * 1_000_000_000 + int(fraction)
