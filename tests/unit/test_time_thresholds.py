"""The policies' time comparisons in Python (policy.time_thresholds): what they compare, how a
time is read, and when each threshold passes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from supportgate.policy.time_thresholds import (
    CLOCK_SKEW_NS,
    NS_PER_DAY,
    Threshold,
    UnknownTime,
    thresholds,
    time_compared,
    timestamp_ns,
)

AT = "2026-10-01T00:00:00Z"
AT_NS = 1_790_812_800 * 1_000_000_000
WAIVER = {"id": "w-1", "rule": "port.production", "expires_at": "2027-01-01T00:00:00Z"}


def _manifest(evidence: Any = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"accelerator": {"arch": "sm90"}}
    if evidence is not None:
        spec["evidence"] = evidence
    return {"kind": "HardwareManifest", "spec": spec}


@pytest.mark.parametrize(
    ("manifest", "waivers", "expected"),
    [
        (_manifest(), [], []),
        (_manifest({"build": {"status": "passed"}}), [], []),
        (_manifest({"build": {"status": "passed", "at": AT}}), [], [("evidence", AT)]),
        # only an item that says passed can be proof: the time of any other is never compared
        (_manifest({"build": {"status": "failed", "at": AT}}), [], []),
        (_manifest({"smoke": "not an object"}), [], [("evidence", "not an object")]),
        (_manifest(["not", "a", "map"]), [], [("evidence", ["not", "a", "map"])]),
        (_manifest(), [WAIVER], [("waiver", WAIVER["expires_at"])]),
    ],
)
def test_what_the_policies_compare_with_the_time(
    manifest: dict[str, Any], waivers: list[dict[str, Any]], expected: list[tuple[str, Any]]
) -> None:
    assert list(time_compared(manifest, waivers)) == expected


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        (AT, AT_NS),
        ("2026-10-01T02:00:00+02:00", AT_NS),
        ("2026-09-30T23:30:00.5-00:30", AT_NS + 500_000_000),
        ("2026-10-01T00:00:00.000000001Z", AT_NS + 1),
        ("2024-02-29T00:00:00Z", 1_709_164_800 * 1_000_000_000),
    ],
)
def test_a_time_is_read_to_the_nanosecond(text: str, ns: int) -> None:
    assert timestamp_ns(text) == ns


@pytest.mark.parametrize(
    "value",
    [
        "2026-10-01",
        "2026-10-01t00:00:00z",
        "2026-10-01T00:00:00",
        "2025-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "1677-12-31T00:00:00Z",
        "2262-01-01T00:00:00Z",
        "2026-10-01T00:00:00.0000000001Z",
        None,
        1790812800,
    ],
)
def test_anything_else_is_unknown_not_guessed(value: Any) -> None:
    with pytest.raises(UnknownTime):
        timestamp_ns(value)


PASSED = {"status": "passed", "at": AT}


def test_evidence_comes_due_5_minutes_before_its_time_and_turns_stale_after_its_age() -> None:
    manifest = _manifest({"build": PASSED})
    found = thresholds(manifest, [WAIVER], 90)
    assert found == [
        Threshold("waiver", timestamp_ns(WAIVER["expires_at"])),
        Threshold("future", AT_NS - CLOCK_SKEW_NS),
        Threshold("stale", AT_NS + 90 * NS_PER_DAY + 1),
    ]
    assert found[1].flips_at == datetime(2026, 9, 30, 23, 55, tzinfo=UTC)
    assert found[2].flips_at == datetime(2026, 12, 30, tzinfo=UTC)  # rounded down to the µs
    # no maximum age: evidence is never stale, but may still lie ahead
    assert thresholds(manifest, [], None) == [Threshold("future", AT_NS - CLOCK_SKEW_NS)]
    with pytest.raises(UnknownTime):
        thresholds(manifest, [], 90.5)


def test_a_threshold_past_the_last_datetime_is_the_last_datetime() -> None:
    """A matrix may allow evidence 2**53 - 1 days old: the threshold lies far beyond what a
    datetime holds, and the policies, which compare times up to 2261, never see it pass."""
    (_, found) = thresholds(_manifest({"build": PASSED}), [], 2**53 - 1)
    assert found.flips_at == datetime.max.replace(tzinfo=UTC)
    assert found.flips_at_ns > timestamp_ns("2261-12-31T23:59:59Z")
