"""The fleet follows the policies (issue 21 part 7): every example recorded under the policy
tree before CONTRACT section 10 (and its default matrix), then a service started on today's
tree. Its start sweeps the fleet (cause `policy`), and each verdict change is an alert naming
the rules the decision gained and lost. The matrix the database holds stays as published: the
hardware catalogue of 10.3 reaches the fleet when an admin publishes a matrix that has it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..api import Api, running_api
from ..api_support import post_examples
from ..clock import FakeClock
from ..examples import expected
from ..matrix.test_matrix import matrix
from ..policy_trees import BASELINE_REV, baseline_tree
from ..waiting import wait_until


def _alerts(api: Api) -> dict[str, dict[str, Any]]:
    response = api.client.get("/v1/alerts?limit=500", headers=api.headers("procurement"))
    assert response.status_code == 200, response.text
    return {item["manifest"]["name"]: item for item in response.json()["items"]}


def _swept(api: Api, count: int) -> dict[str, str] | None:
    """Each manifest's verdict once the sweep (cause `policy`) has judged all `count`."""
    response = api.client.get("/v1/manifests?limit=500", headers=api.headers("procurement"))
    latest = [item["latest_decision"] for item in response.json()["items"]]
    if len(latest) != count or any(decision["cause"] != "policy" for decision in latest):
        return None
    return {decision["manifest"]["name"]: decision["verdict"] for decision in latest}


def _rules(violations: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(violation["rule"], violation["severity"]) for violation in violations}


def test_a_fleet_recorded_under_the_previous_policies_follows_the_new_ones(
    migrated_db_url: str, tmp_path: Path
) -> None:
    clock = FakeClock(expected().evaluated_at)
    old_tree = baseline_tree(BASELINE_REV, tmp_path)
    with running_api(migrated_db_url, clock=clock, policy_dir=old_tree) as before:
        recorded = {body["manifest"]["name"]: body for body in post_examples(before)}
        assert _alerts(before) == {}

    clock.advance(60)  # the new service's decisions come after the ones it re-judges
    with running_api(migrated_db_url, clock=clock, key_suffix="-new") as after:
        swept = wait_until(lambda: _swept(after, len(recorded)), "the policy sweep of the fleet")
        alerts = _alerts(after)
        clock.advance(60)
        published = after.client.post(
            "/v1/matrix", json=matrix("2026.12.1"), headers=after.headers("admin")
        )
        assert published.status_code == 201, published.text
        retyped = wait_until(
            lambda: _alerts(after).get("h100-pool-retyped"), "the catalogue's verdict change"
        )
    changed = {name for name, body in recorded.items() if swept[name] != body["verdict"]}

    assert changed, "section 10 changes verdicts of the examples"
    assert set(alerts) == changed
    for name, alert in alerts.items():
        assert alert["cause"] == "policy", name
        assert alert["from"] != alert["to"], name
        assert alert["gained"] or alert["lost"], f"{name}: an alert names why"
        for violation in alert["gained"] + alert["lost"]:
            assert violation["message"], (name, violation)

    # The changes the source asked for, each with its reason.
    toolkit = alerts["b200-pool-cuda12"]
    assert (toolkit["from"], toolkit["to"]) == ("rejected", "experimental")
    assert ("support.toolkit", "deny") in _rules(toolkit["lost"])
    assert ("support.toolkit", "warn") in _rules(toolkit["gained"])
    alternative = alerts["v41-flash-h100-vllm"]
    assert (alternative["from"], alternative["to"]) == ("rejected", "experimental")
    assert ("support.engine", "deny") in _rules(alternative["lost"])
    assert ("support.alternative", "warn") in _rules(alternative["gained"])
    assert "h100-pool-retyped" not in alerts  # the old matrix has no catalogue
    assert (retyped["from"], retyped["to"], retyped["cause"]) == ("supported", "rejected", "matrix")
    assert ("hardware.accelerator-arch", "deny") in _rules(retyped["gained"])
