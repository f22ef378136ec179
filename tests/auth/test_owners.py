"""Owner-scoped keys (CONTRACT section 7): a key with owners posts only manifests of those
owners, never replaces a tracked manifest another owner holds, and only an admin's key
changes a tracked manifest's owner.

The attack of issue 12: with team B's ci key, re-posting team A's `h100-pool-a` as an sm100
pool with CUDA 13 flipped a rejected production deployment on it to supported.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from httpx import Response
from sqlalchemy import insert

from supportgate.auth.keys import display_prefix, generate_key, hash_key
from supportgate.auth.services import REFRESH_SECONDS
from supportgate.db import ApiKey
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.ledger.batches import Batch, DecisionWrite, Tracking
from supportgate.manifests import decode_manifest

from ..api import Api
from ..api_support import example, post, rows
from ..clock import FakeClock
from ..waiting import wait_until

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


def _write(api: Api, owner: str) -> DecisionWrite:
    """h100-pool-a as a ci key of `owner` submits it, evaluated as the service does."""
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
        Batch(decisions=[_write(api, "infra"), _write(api, "research")])
    )
    assert applied.decisions[0] is not None
    assert applied.decisions[1] is None
    assert _tracked(api, "HardwareManifest", POOL)["owner"] == "infra"


# -- an admin key is never scoped (CONTRACT 11.3) -----------------------------------------------
# An owner-scoped admin key escaped its owners: it minted an unscoped admin key, untracked
# another team's manifest and re-posted it, revoked and waived what was not its own. The API
# and the CLI now refuse owners on an admin key and migration 0010 drops them from old ones; a
# row that still pairs the two (written around the key service) is refused, never obeyed.


def _planted_scoped_admin(api: Api, clock: FakeClock) -> str:
    """An admin key with owners, as a database from before migration 0010 held it: its
    secret, seen by the key service's next read of the table."""
    secret = generate_key()
    with api.runtime.db.begin() as connection:
        connection.execute(
            insert(ApiKey.__table__).values(  # type: ignore[attr-defined]
                name="research-admin",
                role="admin",
                key_hash=hash_key(secret),
                prefix=display_prefix(secret),
                owners=["research"],
                created_at=clock.now(),
            )
        )
    clock.advance(REFRESH_SECONDS)
    return secret


def _mint(api: Api, secret: str) -> tuple[Response, Callable[[], bool]]:
    response = api.client.post(
        "/v1/keys", json={"name": "escaped", "role": "admin"}, headers=_as(secret)
    )
    keys = api.client.get("/v1/keys", headers=api.headers("admin")).json()["items"]
    return response, lambda: "escaped" not in {key["name"] for key in keys}


def _untrack(api: Api, secret: str) -> tuple[Response, Callable[[], bool]]:
    response = api.client.delete(f"/v1/manifests/HardwareManifest/{POOL}", headers=_as(secret))
    return response, lambda: _tracked(api, "HardwareManifest", POOL)["owner"] == "infra"


def _repost(api: Api, secret: str) -> tuple[Response, Callable[[], bool]]:
    """The second half of the escape: the pool untracked (here by the real admin), the scoped
    admin key posts its own under the pool's name."""
    path = f"/v1/manifests/HardwareManifest/{POOL}"
    assert api.client.delete(path, headers=api.headers("admin")).status_code == 204
    response = post(api, _forged_pool("research"), role=None, **_as(secret))
    return response, lambda: api.client.get(path, headers=api.headers("admin")).status_code == 404


def _revoke(api: Api, secret: str) -> tuple[Response, Callable[[], bool]]:
    response = api.client.delete("/v1/keys/team-a-ci", headers=_as(secret))
    keys = api.client.get("/v1/keys", headers=api.headers("admin")).json()["items"]
    return response, lambda: all(k["revoked_at"] is None for k in keys if k["name"] == "team-a-ci")


def _waive(api: Api, secret: str) -> tuple[Response, Callable[[], bool]]:
    body = {
        "rule": "port.production",
        "kind": "DeploymentManifest",
        "name": DEPLOYMENT,
        "justification": "research signs off on infra's production deployment",
        "expires_at": "2099-01-01T00:00:00Z",
    }
    response = api.client.post("/v1/waivers", json=body, headers=_as(secret))
    waivers = api.client.get("/v1/waivers", headers=api.headers("admin")).json()["items"]
    return response, lambda: waivers == []


@pytest.mark.parametrize("escape", [_mint, _untrack, _repost, _revoke, _waive])
def test_an_admin_key_with_owners_cannot_act(
    clocked_api: Api,
    clock: FakeClock,
    escape: Callable[[Api, str], tuple[Response, Callable[[], bool]]],
) -> None:
    _production_on_team_as_pool(clocked_api)
    secret = _planted_scoped_admin(clocked_api, clock)

    response, unchanged = escape(clocked_api, secret)

    assert response.status_code == 401, response.text
    assert unchanged()


def test_owners_on_an_admin_key_are_refused_naming_the_field(api: Api) -> None:
    before = api.client.get("/v1/keys", headers=api.headers("admin")).json()["items"]
    response = api.client.post(
        "/v1/keys",
        json={"name": "research-admin", "role": "admin", "owners": ["research"]},
        headers=api.headers("admin"),
    )
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "$.owners"
    assert "admin" in response.json()["detail"]
    assert api.client.get("/v1/keys", headers=api.headers("admin")).json()["items"] == before
