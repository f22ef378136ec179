"""The values the policies compare with the evaluation time (policy.inputs.time_compared),
which both the policy memo (`timeless_key`) and a sweep's memo rely on."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from supportgate.policy.inputs import build_input, time_compared

AT = "2026-10-01T00:00:00Z"
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
        (_manifest({"smoke": {"passed": True}}), [], []),
        (_manifest({"smoke": {"passed": True, "at": AT}}), [], [("evidence", AT)]),
        (_manifest({"smoke": "not an object"}), [], [("evidence", "not an object")]),
        (_manifest(["not", "a", "map"]), [], [("evidence", ["not", "a", "map"])]),
        (_manifest(), [WAIVER], [("waiver", WAIVER["expires_at"])]),
    ],
)
def test_what_the_policies_compare_with_the_time(
    manifest: dict[str, Any], waivers: list[dict[str, Any]], expected: list[tuple[str, Any]]
) -> None:
    assert list(time_compared(manifest, waivers)) == expected
    policy_input = build_input(manifest, evaluated_at=datetime.now(UTC), waivers=waivers)
    assert (policy_input.timeless_key is None) == bool(expected)
