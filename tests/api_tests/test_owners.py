"""Owner-scoped keys (CONTRACT section 7): a key with owners posts only manifests of those
owners, never replaces a tracked manifest another owner holds, and only an admin's key
changes a tracked manifest's owner.

The attack of issue 12: with team B's ci key, re-posting team A's `h100-pool-a` as an sm100
pool with CUDA 13 flipped a rejected production deployment on it to supported.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.ledger.batches import Batch, DecisionWrite, Tracking
from supportgate.manifests import decode_manifest

from ..api import Api
from ..waiting import wait_until
from .support import example, post, rows

POOL = "h100-pool-a"
DEPLOYMENT = "v41-flash-h100-prod"


def _key(api: Api, name: str, role: str = "ci", owners: list[str] | None = None) -> str:
    response = api.client.post(
        "/v1/keys",
        json={"name": name, "role": role, "owners": owners or []},
        headers=api.headers("admin"),
    )
    assert response.status_code == 201, response.text
    secret: str = response.json()["key"]
    return secret


def _as(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def _forged_pool(owner: str) -> dict[str, Any]:
    """h100-pool-a as an sm100 pool with CUDA 13: the B200 example under the H100 pool's name."""
    doc = example("hw-b200-pool.yaml")
    doc["metadata"] = {"name": POOL, "owner": owner}
    return doc


def _tracked(api: Api, kind: str, name: str) -> dict[str, Any]:
    response = api.client.get(f"/v1/manifests/{kind}/{name}", headers=api.headers("procurement"))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _history(api: Api, kind: str, name: str) -> list[dict[str, Any]]:
    url = f"/v1/manifests/{kind}/{name}/history"
    items: list[dict[str, Any]] = api.client.get(url, headers=api.headers("procurement")).json()[
        "items"
    ]
    return items


def _production_on_team_as_pool(api: Api) -> tuple[str, str]:
    """Team A (infra) tracks h100-pool-a, ml-platform a rejected production deployment on it;
    team A's and team B's keys."""
    team_a = _key(api, "team-a-ci", owners=["infra"])
    team_b = _key(api, "team-b-ci", owners=["research"])
    ml = _key(api, "ml-platform-ci", owners=["ml-platform"])
    assert post(api, example("hw-h100-pool-a.yaml"), role=None, **_as(team_a)).status_code == 201
    deployment = post(api, example("dep-h100-production.yaml"), role=None, **_as(ml))
    assert deployment.status_code == 201, deployment.text
    assert deployment.json()["verdict"] == "rejected"
    return team_a, team_b


def test_another_teams_key_cannot_replace_its_pool(api: Api) -> None:
    _, team_b = _production_on_team_as_pool(api)
    before = rows(api)

    for owner in ("research", "infra"):  # its own owner, or the pool's owner claimed
        response = post(api, _forged_pool(owner), role=None, **_as(team_b))
        assert response.status_code == 403, response.text
        assert response.json()["field"] == "$.metadata.owner"

    assert rows(api) == before
    pool = _tracked(api, "HardwareManifest", POOL)
    assert pool["owner"] == "infra"
    assert pool["content"]["spec"]["accelerator"]["arch"] == "sm90"
    deployment = _tracked(api, "DeploymentManifest", DEPLOYMENT)
    assert deployment["latest_decision"]["verdict"] == "rejected"
    assert len(_history(api, "DeploymentManifest", DEPLOYMENT)) == 1


def test_the_owners_key_replaces_its_pool_and_the_deployment_moves(api: Api) -> None:
    """The same forged pool from the team that owns it is a real change: the deployment is
    re-evaluated on it (what team B's key must not be able to cause)."""
    team_a, _ = _production_on_team_as_pool(api)
    assert post(api, _forged_pool("infra"), role=None, **_as(team_a)).status_code == 201

    def redecided() -> list[dict[str, Any]] | None:
        history = _history(api, "DeploymentManifest", DEPLOYMENT)
        return history if len(history) == 2 else None

    latest = wait_until(redecided, "the deployment's re-evaluation")[0]
    assert latest["cause"] == "hardware"
    assert latest["verdict"] != "rejected"


def test_an_unscoped_ci_key_keeps_the_owner_and_only_an_admin_changes_it(api: Api) -> None:
    assert post(api, example("hw-h100-pool-a.yaml")).status_code == 201  # the plain ci key

    moved = _forged_pool("research")
    refused = post(api, moved)
    assert refused.status_code == 403, refused.text
    assert refused.json()["field"] == "$.metadata.owner"
    assert post(api, _forged_pool("infra")).status_code == 201  # same owner: any ci key

    scoped_admin = _key(api, "research-admin", role="admin", owners=["research"])
    assert post(api, moved, role=None, **_as(scoped_admin)).status_code == 403
    assert post(api, moved, role="admin").status_code == 201
    assert _tracked(api, "HardwareManifest", POOL)["owner"] == "research"


def test_a_scoped_key_posts_only_for_its_owners(api: Api) -> None:
    infra = _key(api, "infra-ci", owners=["infra", "infra-lab"])
    unowned = example("hw-h100-pool-a.yaml")
    del unowned["metadata"]["owner"]
    for doc in (unowned, example("hw-b200-pool.yaml") | {"metadata": {"name": "x", "owner": "ml"}}):
        response = post(api, doc, role=None, **_as(infra))
        assert response.status_code == 403, response.text
        answer = response.json()
        assert answer["field"] == "$.metadata.owner"
        assert "metadata.owner" in answer["detail"]
    assert rows(api).decisions == 0

    lab = example("hw-b200-pool.yaml")
    lab["metadata"]["owner"] = "infra-lab"
    assert post(api, lab, role=None, **_as(infra)).status_code == 201


def _write(api: Api, owner: str, **authority: Any) -> DecisionWrite:
    """h100-pool-a as `owner` submits it, evaluated as the service does, with the key's
    `authority` (Tracking.acts_for, changes_owner)."""
    doc = example("hw-h100-pool-a.yaml")
    doc["metadata"]["owner"] = owner
    manifest = decode_manifest(json.dumps(doc).encode(), fmt="json")
    evaluator = Evaluator(api.runtime.engine, api.runtime.matrices.current().loaded)
    evaluation = evaluator.evaluate(Subject(manifest), evaluated_at=datetime.now(UTC))
    tracking = Tracking(
        content=doc,
        content_digest=owner,
        owner=owner,
        hardware_ref=None,
        **authority,
    )
    return DecisionWrite(
        decision=evaluation.decision,
        policy_input=evaluation.policy_input.canonical.decode(),
        tracking=tracking,
    )


def test_two_owners_in_one_group_commit_the_first_wins(api: Api) -> None:
    """The writer holds each submission against the owner before it in the same batch: two
    teams posting a new name at once cannot both pass a check made before either is written."""
    applied = api.runtime.ledger.write(
        Batch(decisions=[_write(api, "infra", acts_for=["infra"]), _write(api, "research")])
    )
    assert applied.decisions[0] is not None
    assert applied.decisions[1] is None
    assert _tracked(api, "HardwareManifest", POOL)["owner"] == "infra"
