"""POST /v1/matrix/impact on SQLite and PostgreSQL: the tracked manifests a proposed matrix
would change, judged against their decision under the current matrix made in the same call,
with the current waivers; nothing is recorded."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from sqlalchemy import text

from ..api import Api, running_api
from ..api_support import created, example, named, post_examples, rows
from ..matrix.test_matrix import matrix, with_sm90
from ..opa import shared_credentials

H100_CHANGES = {
    ("HardwareManifest", "h100-pool-a"): ("experimental", "supported"),
    ("DeploymentManifest", "v41-flash-h100-trial"): ("experimental", "supported"),
    ("DeploymentManifest", "v41-flash-h100-prod"): ("rejected", "supported"),
    ("DeploymentManifest", "v41-flash-h100-drift"): ("experimental", "supported"),
}


def track_examples(api: Api) -> int:
    """Post every example, hardware first; how many manifests are tracked."""
    return len(post_examples(api))


def impact(
    api: Api, document: dict[str, Any], *, role: str = "procurement", fmt: str = "yaml"
) -> Any:
    body = yaml.safe_dump(document, sort_keys=False) if fmt == "yaml" else json.dumps(document)
    return api.client.post(
        "/v1/matrix/impact",
        content=body.encode(),
        headers=api.headers(role, **{"Content-Type": f"application/{fmt}"}),
    )


def report(api: Api, document: dict[str, Any], **options: Any) -> dict[str, Any]:
    response = impact(api, document, **options)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def changes(body: dict[str, Any]) -> dict[tuple[str, str], tuple[str, str]]:
    return {
        (item["manifest"]["kind"], item["manifest"]["name"]): (item["from"], item["to"])
        for item in body["changed"]
    }


def table_rows(api: Api) -> dict[str, int]:
    """Every table's row count (alembic's bookkeeping aside)."""
    with api.runtime.db.connect() as connection:
        names = [
            name
            for name in connection.dialect.get_table_names(connection)
            if name != "alembic_version"
        ]
        return {
            name: int(connection.execute(text(f'SELECT count(*) FROM "{name}"')).scalar_one())  # noqa: S608 - names from the catalog
            for name in names
        }


def test_making_sm90_official_lists_the_h100_manifests_and_records_nothing(api: Api) -> None:
    # No background writer may move the counts: the sweeper and its scheduler stop first (the
    # pools posted below would otherwise queue sweeps of their deployments).
    api.runtime.sweeps.stop()
    api.runtime.reevaluation.stop()
    tracked = track_examples(api)
    before = table_rows(api)

    body = report(api, with_sm90("2026.12.1"))

    assert body["proposed_version"] == "2026.12.1"
    assert body["current_version"] == "2026.11.1"
    assert body["evaluated"] == tracked
    assert changes(body) == H100_CHANGES
    assert [(c["manifest"]["kind"], c["manifest"]["name"]) for c in body["changed"]] == sorted(
        H100_CHANGES
    )
    pool = next(c for c in body["changed"] if c["manifest"]["name"] == "h100-pool-a")
    assert pool["rules_removed"] == ["support.platform"]
    assert pool["rules_added"] == []
    # why, with the messages: the violation the proposal takes away, none it adds
    assert pool["violations_added"] == []
    [lost] = pool["violations_removed"]
    assert (lost["rule"], lost["severity"]) == ("support.platform", "warn")
    assert "sm90" in lost["message"]
    prod = next(c for c in body["changed"] if c["manifest"]["name"] == "v41-flash-h100-prod")
    assert "port.production" in prod["rules_removed"]

    assert table_rows(api) == before
    assert api.client.get("/v1/matrix", headers=api.headers("procurement")).json()["version"] == (
        "2026.11.1"
    )


def test_yaml_and_json_proposals_answer_the_same(api: Api) -> None:
    track_examples(api)
    proposed = with_sm90("2026.12.1")
    assert report(api, proposed, fmt="json") == report(api, proposed, fmt="yaml")


def test_a_stricter_matrix_lists_what_it_adds(api: Api) -> None:
    track_examples(api)
    stricter = matrix("2026.12.2")
    stricter["engines"]["deepinfer"]["host"]["python"] = {"min": "3.13", "below": "3.14"}
    body = report(api, stricter)
    # Every pool runs Python 3.12; the RTX workstation, the H100 declared sm100 and three
    # deployments were rejected anyway, and vLLM is judged on no host the matrix states.
    assert changes(body) == {
        ("DeploymentManifest", "v41-flash-b200-batch"): ("supported", "rejected"),
        ("DeploymentManifest", "v41-flash-b200-trial"): ("supported", "rejected"),
        ("DeploymentManifest", "v41-flash-b200-rollout"): ("supported", "rejected"),
        ("DeploymentManifest", "v41-flash-h100-drift"): ("experimental", "rejected"),
        ("HardwareManifest", "b200-pool-cuda12"): ("experimental", "rejected"),
        ("DeploymentManifest", "v41-flash-h100-trial"): ("experimental", "rejected"),
        ("HardwareManifest", "ascend950-pool"): ("supported", "rejected"),
        ("HardwareManifest", "b200-pool"): ("supported", "rejected"),
        ("HardwareManifest", "h100-pool-a"): ("experimental", "rejected"),
    }
    for change in body["changed"]:
        assert (change["rules_added"], change["rules_removed"]) == (["host.python"], []), change
        assert change["violations_removed"] == [], change
        assert {(v["rule"], v["severity"]) for v in change["violations_added"]} == {
            ("host.python", "deny")
        }
        assert all("3.13" in v["message"] for v in change["violations_added"]), change


def test_the_same_matrix_changes_nothing(api: Api) -> None:
    tracked = track_examples(api)
    body = report(api, matrix("2026.11.1"))
    assert body == {
        "proposed_version": "2026.11.1",
        "current_version": "2026.11.1",
        "evaluated": tracked,
        "changed": [],
    }


def test_the_comparison_is_with_the_current_matrix_now_not_the_stored_decision(
    api: Api,
) -> None:
    track_examples(api)
    # The deployments' stored decisions say experimental/rejected; with their pool untracked
    # they are rejected (manifest.hardware-ref) under either matrix, so they do not change.
    untrack = api.client.delete(
        "/v1/manifests/HardwareManifest/h100-pool-a", headers=api.headers("admin")
    )
    assert untrack.status_code == 204
    body = report(api, with_sm90("2026.12.1"))
    assert changes(body) == {}


def test_current_waivers_apply_under_both_matrices(api: Api) -> None:
    track_examples(api)
    expires_at = (datetime.now(UTC) + timedelta(days=7)).isoformat()
    waiver = api.client.post(
        "/v1/waivers",
        json={
            "rule": "port.production",
            "kind": "DeploymentManifest",
            "name": "v41-flash-h100-prod",
            "justification": "pilot",
            "expires_at": expires_at,
        },
        headers=api.headers("admin"),
    )
    assert waiver.status_code == 201, waiver.text
    body = report(api, with_sm90("2026.12.1"))
    prod = next(c for c in body["changed"] if c["manifest"]["name"] == "v41-flash-h100-prod")
    assert (prod["from"], prod["to"]) == ("experimental", "supported")
    assert "port.production" not in prod["rules_removed"]  # waived is neither deny nor warn


def test_a_bad_proposal_is_refused_like_a_bad_publish(api: Api) -> None:
    track_examples(api)
    before = rows(api)
    broken = matrix("2026.12.3")
    broken["evidence_max_age_days"] = "ninety"
    response = impact(api, broken)
    assert response.status_code == 400
    assert named(response.json()) == "$.evidence_max_age_days"
    publish = api.client.post(
        "/v1/matrix",
        content=json.dumps(broken).encode(),
        headers=api.headers("admin", **{"Content-Type": "application/json"}),
    )
    assert publish.status_code == 400
    assert named(publish.json()) == named(response.json())
    assert rows(api) == before


def test_roles(api: Api) -> None:
    assert impact(api, with_sm90("2026.12.1"), role="ci").status_code == 403
    no_key = api.client.post("/v1/matrix/impact", content=b"{}")
    assert no_key.status_code == 401
    assert report(api, with_sm90("2026.12.1"), role="admin")["changed"] == []


@pytest.mark.opa
def test_on_opa_the_proposal_never_reaches_the_server(opa_url: str, tmp_path: Path) -> None:
    with running_api(f"sqlite:///{tmp_path / 'supportgate.db'}", opa_url=opa_url) as api:
        assert api.runtime.engine.name == "opa"
        track_examples(api)
        assert changes(report(api, with_sm90("2026.12.1"))) == H100_CHANGES
        held = requests.get(
            f"{opa_url}/v1/data/matrix/version", headers=shared_credentials().headers(), timeout=5
        ).json()["result"]
        assert held == "2026.11.1"
        # Submissions right after still judge under the current matrix.
        assert created(api, example("hw-h100-pool-a.yaml"))["verdict"] == "experimental"


def test_the_catalogue_and_the_alternatives_models_weigh_in_the_analysis(api: Api) -> None:
    """CONTRACT 10.3 and 10.6 through the analysis: without the hardware catalogue the H100
    declared sm100 passes as a listed SM100 pool; once vLLM's entry lists the model, vLLM on
    H100 is supported."""
    track_examples(api)
    proposed = matrix("2026.12.3")
    proposed.pop("accelerators")
    proposed["alternatives"][0]["models"] = ["deepseek-v4.1-flash"]  # an identity, as written
    body = report(api, proposed)
    assert changes(body) == {
        ("DeploymentManifest", "v41-flash-h100-vllm"): ("experimental", "supported"),
        ("HardwareManifest", "h100-pool-retyped"): ("rejected", "supported"),
    }
    retyped = next(c for c in body["changed"] if c["manifest"]["name"] == "h100-pool-retyped")
    assert retyped["rules_removed"] == ["hardware.accelerator-arch"]
