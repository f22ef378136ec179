"""POST /v1/evaluations/dry-run (CONTRACT 11.1) on SQLite and PostgreSQL: the decisions a
submission would get, refs resolved within the request first, and nothing recorded: no
decision, no log entry, no tracking change, no alert, no webhook delivery."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from sqlalchemy import text

from ..api import Api
from ..api_support import DECISION_FIELDS, created, deployment, example, hardware, named, post
from ..auth.test_owners import _as, _key

DRY_RUN = "/v1/evaluations/dry-run"
TABLES = ("decisions", "manifests", "ledger_entries", "alerts", "webhook_deliveries")


def dry_run(
    api: Api, body: Any, *, content_type: str = "application/json", role: str | None = "ci"
) -> Any:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = api.headers(role, **{"Content-Type": content_type})
    return api.client.post(DRY_RUN, content=content, headers=headers)


def stream(*docs: dict[str, Any]) -> bytes:
    return yaml.safe_dump_all(docs, sort_keys=False).encode()


def counts(api: Api) -> dict[str, int]:
    with api.runtime.db.connect() as connection:
        return {
            table: int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())  # noqa: S608 - fixed names
            for table in TABLES
        }


def test_a_stream_is_judged_with_its_own_pool_and_nothing_is_recorded(api: Api) -> None:
    before = counts(api)
    response = dry_run(
        api,
        stream(hardware("pool-new"), deployment(ref="pool-new")),
        content_type="application/yaml",
    )
    assert response.status_code == 200, response.text
    pool, trial = response.json()["decisions"]
    for decision in (pool, trial):
        assert set(decision) == DECISION_FIELDS - {"leaf_index"} | {"recorded"}
        assert decision["id"] is None
        assert decision["recorded"] is False
        assert decision["cause"] == "submission"
    assert pool["manifest"] == {"kind": "HardwareManifest", "name": "pool-new"}
    # the pool of the request is found: no manifest.hardware-ref, the same verdict as recorded
    assert "manifest.hardware-ref" not in {v["rule"] for v in trial["violations"]}
    assert counts(api) == before
    created(api, hardware("pool-new"))
    recorded = created(api, deployment(ref="pool-new"))
    assert (trial["verdict"], trial["violations"]) == (recorded["verdict"], recorded["violations"])


def test_a_ref_resolves_in_the_request_before_the_tracked_pools(api: Api) -> None:
    created(api, hardware("pool-a", python="3.10.4"))  # tracked: rejected python
    tracked_only = dry_run(api, {"manifests": [deployment(ref="pool-a")]}).json()
    own_pool = dry_run(api, {"manifests": [deployment(ref="pool-a"), hardware("pool-a")]}).json()
    assert tracked_only["decisions"][0]["verdict"] == "rejected"
    assert own_pool["decisions"][0]["verdict"] == "experimental"
    assert [d["manifest"]["kind"] for d in own_pool["decisions"]] == [
        "DeploymentManifest",
        "HardwareManifest",
    ]
    missing = dry_run(api, deployment(ref="nowhere")).json()["decisions"][0]
    assert "manifest.hardware-ref" in {v["rule"] for v in missing["violations"]}


def test_a_verdict_change_raises_no_alert_and_no_webhook(api: Api) -> None:
    subscribed = api.client.post(
        "/v1/webhooks", json={"url": "https://hooks.example.com/a"}, headers=api.headers("admin")
    )
    assert subscribed.status_code == 201, subscribed.text
    created(api, hardware("pool-a"))
    tracked = api.client.get(
        "/v1/manifests/HardwareManifest/pool-a", headers=api.headers("procurement")
    ).json()
    before = counts(api)
    response = dry_run(api, hardware("pool-a", python="3.10.4"))  # posted, it would alert
    assert response.json()["decisions"][0]["verdict"] == "rejected"
    assert counts(api) == before
    after = api.client.get(
        "/v1/manifests/HardwareManifest/pool-a", headers=api.headers("procurement")
    ).json()
    assert after == tracked  # the tracked content and its latest decision stay


@pytest.mark.parametrize(
    ("body", "content_type", "field", "where"),
    [
        (
            stream(hardware("pool-a"), hardware("pool-b", nodes=0)),
            "application/yaml",
            "$.spec.nodes",
            "document 2",
        ),
        (
            {"manifests": [hardware("pool-a"), hardware("pool-b", nodes=0)]},
            None,
            "$.manifests[1].spec.nodes",
            "",
        ),
        ({"manifests": []}, None, "$.manifests", ""),
        ({"manifests": [hardware(f"pool-{n}") for n in range(101)]}, None, "$.manifests", "101"),
        (
            {"manifests": [hardware("pool-a"), hardware("pool-a")]},
            None,
            "$.manifests[1].metadata.name",
            "twice",
        ),
        (b"", None, "$", ""),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_document(
    api: Api, body: Any, content_type: str | None, field: str, where: str
) -> None:
    before = counts(api)
    response = dry_run(api, body, content_type=content_type or "application/json")
    assert response.status_code == 400, response.text
    assert named(response.json()) == field
    assert where in response.json()["detail"]
    assert counts(api) == before


def test_owner_scoping_is_that_of_a_submission(api: Api) -> None:
    infra = _key(api, "infra-ci", owners=["infra"])
    pool = example("hw-h100-pool-a.yaml")  # owner: infra
    foreign = {**pool, "metadata": {**pool["metadata"], "owner": "research"}}
    other = {**pool, "metadata": {"name": "other-pool", "owner": "research"}}
    response = api.client.post(
        DRY_RUN, content=json.dumps({"manifests": [pool, other]}), headers=_as(infra)
    )
    assert response.status_code == 403, response.text
    assert named(response.json()) == "$.metadata.owner"
    created(api, pool)
    research = _key(api, "research-ci", owners=["research"])
    taken = api.client.post(DRY_RUN, content=json.dumps(foreign), headers=_as(research))
    assert taken.status_code == 403, taken.text  # a tracked manifest another owner holds
    assert api.client.post(DRY_RUN, content=json.dumps(pool), headers=_as(infra)).status_code == 200


def test_the_dry_run_needs_a_key(api: Api) -> None:
    assert dry_run(api, hardware(), role=None).status_code == 401
    assert post(api, hardware(), role=None).status_code == 401
