"""Waivers over HTTP, on SQLite and PostgreSQL: a waived deny stops rejecting one manifest
until the waiver expires or is deleted; validation names the field; deleted waivers stay
listed (tests/waivers/test_waiver_cache.py: the hot path reads them from memory)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from sqlalchemy import text

from supportgate.audit.replay import replay_decision

from ..api import Api, running_api
from ..api_support import created, deployment, example, named
from ..clock import FakeClock

PROD = "dep-h100-production.yaml"
PROD_KEY = ("DeploymentManifest", "v41-flash-h100-prod")


def _later(**delta: float) -> str:
    return (datetime.now(UTC) + timedelta(**delta)).isoformat().replace("+00:00", "Z")


def waiver_body(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "rule": "port.production",
        "kind": PROD_KEY[0],
        "name": PROD_KEY[1],
        "justification": "H100 production pilot approved by the platform board (ticket PLAT-12)",
        "expires_at": _later(days=30),
    }
    body.update(changes)
    return body


def create(api: Api, role: str | None = "admin", **changes: Any) -> Any:
    return api.client.post("/v1/waivers", json=waiver_body(**changes), headers=api.headers(role))


def waiver(api: Api, **changes: Any) -> dict[str, Any]:
    response = create(api, **changes)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def listing(api: Api, role: str = "procurement", **params: Any) -> Any:
    response = api.client.get("/v1/waivers", params=params, headers=api.headers(role))
    assert response.status_code == 200, response.text
    return response.json()


def waiver_rows(api: Api) -> int:
    with api.runtime.db.connect() as connection:
        return int(connection.execute(text("SELECT count(*) FROM waivers")).scalar_one())


def violation(decision: dict[str, Any], rule: str) -> dict[str, Any]:
    found = [v for v in decision["violations"] if v["rule"] == rule]
    assert len(found) == 1, decision["violations"]
    only: dict[str, Any] = found[0]
    return only


def test_a_waiver_turns_its_deny_into_waived_for_that_manifest_only(api: Api) -> None:
    created(api, example("hw-h100-pool-a.yaml"))
    assert created(api, example(PROD))["verdict"] == "rejected"
    other = deployment("other-prod", ref="h100-pool-a", stage="production")
    assert created(api, other)["verdict"] == "rejected"

    body = waiver(api)
    assert set(body) >= {
        "id",
        "rule",
        "kind",
        "name",
        "justification",
        "expires_at",
        "created_by",
        "created_at",
    }
    assert body["created_by"] == "admin"  # the API key's name
    assert (body["rule"], body["kind"], body["name"]) == ("port.production", *PROD_KEY)
    assert body["deleted_at"] is None

    decision = created(api, example(PROD))
    assert decision["verdict"] == "experimental"
    assert decision["allowed"] is True
    waived = violation(decision, "port.production")
    assert waived["severity"] == "waived"
    assert waived["waiver_id"] == body["id"]
    # Warnings are not waivable and stay warnings.
    assert violation(decision, "support.platform")["severity"] == "warn"
    # The same rule on another manifest still rejects.
    assert created(api, other)["verdict"] == "rejected"


def test_deleting_a_waiver_keeps_its_record_and_restores_the_deny(api: Api) -> None:
    created(api, example("hw-h100-pool-a.yaml"))
    body = waiver(api)
    waived = created(api, example(PROD))
    assert waived["verdict"] == "experimental"

    response = api.client.delete(f"/v1/waivers/{body['id']}", headers=api.headers("admin"))
    assert response.status_code == 204, response.text
    assert created(api, example(PROD))["verdict"] == "rejected"
    # The audit still explains the waived decision: its stored input carries the waiver.
    assert replay_decision(api.runtime, waived["id"]).reproduced

    assert waiver_rows(api) == 1
    (kept,) = listing(api, active="false")["items"]
    assert kept["id"] == body["id"]
    assert kept["deleted_by"] == "admin"
    assert datetime.fromisoformat(kept["deleted_at"]) >= datetime.fromisoformat(body["created_at"])
    assert listing(api, active="true")["items"] == []

    again = api.client.delete(f"/v1/waivers/{body['id']}", headers=api.headers("admin"))
    assert again.status_code == 404
    unknown = api.client.delete("/v1/waivers/no-such-waiver", headers=api.headers("admin"))
    assert unknown.status_code == 404


def test_an_expired_waiver_waives_nothing(api: Api) -> None:
    body = waiver(api, expires_at=_later(days=1))
    expires_at = datetime.fromisoformat(body["expires_at"])
    waivers = api.runtime.waivers
    just_before = expires_at - timedelta(seconds=1)
    assert waivers.active_for(*PROD_KEY, just_before) == [
        {"id": body["id"], "rule": "port.production", "expires_at": body["expires_at"]}
    ]
    assert waivers.active_for(*PROD_KEY, expires_at) == []
    assert waivers.active_by_manifest([PROD_KEY, ("HardwareManifest", "x")], just_before) == {
        PROD_KEY: [{"id": body["id"], "rule": "port.production", "expires_at": body["expires_at"]}],
        ("HardwareManifest", "x"): [],
    }
    assert waivers.active_by_manifest([PROD_KEY], expires_at) == {PROD_KEY: []}


def test_next_expiry_is_the_earliest_undeleted_waiver_to_expire(api: Api) -> None:
    now = datetime.now(UTC)
    assert api.runtime.waivers.next_expiry(now) is None
    soon = waiver(api, expires_at=_later(hours=1))
    later = waiver(api, name="other-prod", expires_at=_later(hours=2))
    first = datetime.fromisoformat(soon["expires_at"])
    second = datetime.fromisoformat(later["expires_at"])
    assert api.runtime.waivers.next_expiry(now) == first
    assert api.runtime.waivers.next_expiry(first) == second
    api.client.delete(f"/v1/waivers/{soon['id']}", headers=api.headers("admin"))
    assert api.runtime.waivers.next_expiry(now) == second
    assert api.runtime.waivers.next_expiry(second) is None


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"rule": "no.such-rule"}, "$.rule"),
        ({"rule": "support.platform"}, "$.rule"),  # a warn rule: nothing to waive
        ({"kind": "ServiceManifest"}, "$.kind"),
        ({"name": "Not_A_Label"}, "$.name"),
        ({"justification": "   "}, "$.justification"),
        ({"expires_at": "2020-01-01T00:00:00Z"}, "$.expires_at"),
        ({"expires_at": "2999-01-01T00:00:00"}, "$.expires_at"),  # no time zone
        ({"expires_at": "next tuesday"}, "$.expires_at"),
        ({"expires_at": "0001-01-01T01:00:00+05:00"}, "$.expires_at"),
        # Beyond what the policies can compare: it would silently waive nothing.
        ({"expires_at": "2300-01-01T00:00:00Z"}, "$.expires_at"),
        ({"expires_at": "9999-12-31T23:00:00-05:00"}, "$.expires_at"),
    ],
)
def test_bad_waivers_are_400_naming_the_field_and_write_nothing(
    shared_api: Api, changes: dict[str, Any], field: str
) -> None:
    response = create(shared_api, **changes)
    assert response.status_code == 400, response.text
    assert named(response.json()) == field
    assert waiver_rows(shared_api) == 0


def test_missing_and_unknown_fields_are_400_naming_them(api: Api) -> None:
    body = waiver_body(owner="me")
    response = api.client.post("/v1/waivers", json=body, headers=api.headers("admin"))
    assert response.status_code == 400
    assert "owner" in response.text
    del body["owner"], body["justification"]
    response = api.client.post("/v1/waivers", json=body, headers=api.headers("admin"))
    assert response.status_code == 400
    assert "justification" in response.text
    assert waiver_rows(api) == 0


def test_roles(api: Api) -> None:
    assert create(api, role=None).status_code == 401
    assert create(api, role="ci").status_code == 403
    assert create(api, role="procurement").status_code == 403
    body = waiver(api)
    assert api.client.get("/v1/waivers", headers=api.headers("ci")).status_code == 403
    assert listing(api, role="procurement")["items"][0]["id"] == body["id"]
    delete = api.client.delete(f"/v1/waivers/{body['id']}", headers=api.headers("procurement"))
    assert delete.status_code == 403
    assert listing(api, active="true")["items"][0]["id"] == body["id"]


def test_listing_filters_and_pages_newest_first(clocked_api: Api, clock: FakeClock) -> None:
    api = clocked_api
    soon = (clock.now() + timedelta(seconds=1)).isoformat()
    made = [
        waiver(api),
        waiver(api, rule="port.pinning"),
        waiver(api, kind="HardwareManifest", name="h100-pool-a", rule="host.python"),
        waiver(api, name="other-prod", expires_at=soon),
    ]
    api.client.delete(f"/v1/waivers/{made[1]['id']}", headers=api.headers("admin"))
    ids = [body["id"] for body in made]

    assert [item["id"] for item in listing(api)["items"]] == ids[::-1]
    assert [item["id"] for item in listing(api, kind="HardwareManifest")["items"]] == [ids[2]]
    assert [item["id"] for item in listing(api, name=PROD_KEY[1])["items"]] == [ids[1], ids[0]]
    assert [item["id"] for item in listing(api, rule="port.pinning")["items"]] == [ids[1]]
    clock.advance(1)  # the last one expires
    # Deleted or expired is inactive.
    assert [item["id"] for item in listing(api, active="true")["items"]] == [ids[2], ids[0]]
    assert [item["id"] for item in listing(api, active="false")["items"]] == [ids[3], ids[1]]

    pages: list[str] = []
    cursor: str | None = None
    while True:
        page = listing(api, limit=1, **({"cursor": cursor} if cursor else {}))
        pages += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == ids[::-1]

    for params in ({"cursor": "nonsense"}, {"limit": 0}, {"active": "maybe"}, {"kind": "X"}):
        response = api.client.get("/v1/waivers", params=params, headers=api.headers("procurement"))
        assert response.status_code == 400, (params, response.text)
        assert named(response.json()) == next(iter(params))


@pytest.mark.opa
def test_waivers_apply_on_the_opa_engine_too(opa_url: str, tmp_path: Path) -> None:
    with running_api(f"sqlite:///{tmp_path / 'supportgate.db'}", opa_url=opa_url) as api:
        assert api.runtime.engine.name == "opa"
        created(api, example("hw-h100-pool-a.yaml"))
        body = waiver(api)
        decision = created(api, example(PROD))
        assert decision["verdict"] == "experimental"
        waived = violation(decision, "port.production")
        assert (waived["severity"], waived["waiver_id"]) == ("waived", body["id"])


def test_a_key_given_twice_is_400_with_no_query_parameters(sqlite_api: Api) -> None:
    """The body's check runs on a POST without parameters too (the hook skips only the
    parameters' checks there)."""
    body = msgspec.json.encode(waiver_body()).decode()
    twice = body[:-1] + ', "justification": "a second one"}'
    response = sqlite_api.client.post(
        "/v1/waivers",
        content=twice,
        headers=sqlite_api.headers("admin", **{"Content-Type": "application/json"}),
    )
    assert response.status_code == 400, response.text
    assert named(response.json()) == "$.justification"
    assert waiver_rows(sqlite_api) == 0
