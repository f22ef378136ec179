"""When a sweep may know a decision unchanged: the memo key and stable_until (no I/O)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from supportgate.reevaluation.memo import MARGIN, memo_key, stable_until

pytestmark = pytest.mark.fast

NOW = datetime(2026, 11, 30, tzinfo=UTC)
FOREVER = datetime.max.replace(tzinfo=UTC)


def deployment(**evidence: Any) -> dict[str, Any]:
    return {"kind": "DeploymentManifest", "spec": {"evidence": evidence}}


def key(**changes: Any) -> str:
    parts: dict[str, Any] = {
        "content_digest": "sha256:c",
        "pool_digest": "sha256:p",
        "matrix_key": "m1",
        "policy_revision": "r1",
        "waivers": [],
        "latest_decision_id": "d1",
    }
    return memo_key(**{**parts, **changes})


def test_the_key_covers_everything_but_time() -> None:
    assert key() == key()
    for change in (
        {"content_digest": "sha256:other"},
        {"pool_digest": None},
        {"matrix_key": "m2"},
        {"policy_revision": "r2"},
        {"waivers": [{"id": "w", "rule": "port.production", "expires_at": "2027-01-01T00:00:00Z"}]},
        {"latest_decision_id": "d2"},
    ):
        assert key(**change) != key(), change


def test_fresh_evidence_holds_until_it_turns_stale() -> None:
    at = NOW - timedelta(days=10)
    until = stable_until(
        deployment(build={"status": "passed", "at": at.isoformat()}),
        evaluated_at=NOW,
        max_age_days=90,
        waivers=[],
    )
    assert until == at + timedelta(days=90) - MARGIN


def test_stale_evidence_stays_stale_and_no_evidence_never_changes() -> None:
    old = (NOW - timedelta(days=400)).isoformat()
    stale = deployment(build={"status": "passed", "at": old})
    assert stable_until(stale, evaluated_at=NOW, max_age_days=90, waivers=[]) == FOREVER
    assert stable_until({"spec": {}}, evaluated_at=NOW, max_age_days=90, waivers=[]) == FOREVER


def test_the_first_waiver_expiry_bounds_it() -> None:
    soon = NOW + timedelta(days=3)
    waivers = [
        {"id": "a", "rule": "port.production", "expires_at": "2027-06-01T00:00:00Z"},
        {"id": "b", "rule": "port.pinning", "expires_at": soon.isoformat()},
    ]
    assert stable_until({"spec": {}}, evaluated_at=NOW, max_age_days=90, waivers=waivers) == (
        soon - MARGIN
    )


def test_a_flip_within_the_margin_or_an_unreadable_time_means_evaluate_again() -> None:
    close = (NOW - timedelta(days=90) + MARGIN / 2).isoformat()
    assert (
        stable_until(
            deployment(build={"status": "passed", "at": close}),
            evaluated_at=NOW,
            max_age_days=90,
            waivers=[],
        )
        is None
    )
    odd = deployment(build={"status": "passed", "at": "last tuesday"})
    assert stable_until(odd, evaluated_at=NOW, max_age_days=90, waivers=[]) is None


def test_without_a_numeric_max_age_evidence_never_goes_stale() -> None:
    fresh = deployment(build={"status": "passed", "at": NOW.isoformat()})
    assert stable_until(fresh, evaluated_at=NOW, max_age_days=None, waivers=[]) == FOREVER
