"""The admin's key API (CONTRACT section 7): GET/POST /v1/keys, DELETE /v1/keys/{name}; a
revoked or expired key is 401 at once; only hashes are stored; last use is written at most
once a minute per key, not once per request."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, text

from supportgate.auth.services import REFRESH_SECONDS, KeyService

from ..api import Api
from ..clock import FakeClock

KEYS = "/v1/keys"


def _create(api: Api, **body: Any) -> Any:
    return api.client.post(KEYS, json=body, headers=api.headers("admin"))


def _listed(api: Api) -> dict[str, dict[str, Any]]:
    response = api.client.get(KEYS, headers=api.headers("admin"))
    assert response.status_code == 200, response.text
    return {item["name"]: item for item in response.json()["items"]}


def _api_keys(api: Api) -> list[dict[str, Any]]:
    with api.runtime.db.connect() as connection:
        return [dict(row._mapping) for row in connection.execute(text("SELECT * FROM api_keys"))]


def _bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def test_a_created_key_is_shown_once_stored_hashed_and_works(api: Api) -> None:
    response = _create(api, name="team-a-ci", role="ci", owners=["infra", "infra"])
    assert response.status_code == 201, response.text
    created = response.json()
    secret = created["key"]
    assert (created["name"], created["role"], created["owners"]) == ("team-a-ci", "ci", ["infra"])
    assert created["revoked_at"] is None
    assert created["expires_at"] is None

    listed = _listed(api)["team-a-ci"]
    assert "key" not in listed
    assert listed["prefix"] == secret[:8]
    (row,) = [row for row in _api_keys(api) if row["name"] == "team-a-ci"]
    assert row["key_hash"] == hashlib.sha256(secret.encode()).hexdigest()
    assert secret[8:] not in " ".join(str(value) for value in row.values())

    assert api.client.get("/schema/openapi.json", headers=_bearer(secret)).status_code == 200
    assert api.client.get("/v1/manifests", headers=_bearer(secret)).status_code == 403


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "has space", "role": "ci"}, "$.name"),
        ({"name": "", "role": "ci"}, "$.name"),
        ({"name": "x", "role": "root"}, "$.role"),
        ({"name": "x"}, "$.role"),
        ({"role": "ci"}, "$.name"),
        ({"name": "x", "role": "ci", "owners": [""]}, "$.owners[0]"),
        ({"name": "x", "role": "ci", "owners": ["a", "a\x00b"]}, "$.owners[1]"),
        ({"name": "x", "role": "ci", "owners": ["a"] * 101}, "$.owners"),
        ({"name": "x", "role": "ci", "owners": "infra"}, "$.owners"),
        ({"name": "x", "role": "ci", "expires_in": "0d"}, "$.expires_in"),
        ({"name": "x", "role": "ci", "expires_in": "9999999d"}, "$.expires_in"),
        ({"name": "x", "role": "ci", "expires_in": "90 days"}, "$.expires_in"),
        ({"name": "x", "role": "ci", "extra": 1}, "$.extra"),
    ],
)
def test_bad_input_is_400_naming_the_field_and_writes_nothing(
    sqlite_api: Api, body: dict[str, Any], field: str
) -> None:
    before = _api_keys(sqlite_api)
    response = _create(sqlite_api, **body)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field
    assert _api_keys(sqlite_api) == before


def test_a_duplicate_name_is_409_and_keeps_the_first(sqlite_api: Api) -> None:
    assert _create(sqlite_api, name="bot", role="ci").status_code == 201
    response = _create(sqlite_api, name="bot", role="admin")
    assert response.status_code == 409
    assert response.json()["field"] == "$.name"
    assert _listed(sqlite_api)["bot"]["role"] == "ci"


def test_only_an_admin_manages_keys(sqlite_api: Api) -> None:
    for role in ("ci", "procurement"):
        headers = sqlite_api.headers(role)
        assert sqlite_api.client.get(KEYS, headers=headers).status_code == 403
        assert sqlite_api.client.post(KEYS, json={}, headers=headers).status_code == 403
        assert sqlite_api.client.delete(f"{KEYS}/ci", headers=headers).status_code == 403


def test_a_revoked_key_is_refused_at_once(api: Api) -> None:
    secret = _create(api, name="bot", role="procurement").json()["key"]
    assert api.client.get("/v1/manifests", headers=_bearer(secret)).status_code == 200

    assert api.client.delete(f"{KEYS}/bot", headers=api.headers("admin")).status_code == 204
    assert api.client.get("/v1/manifests", headers=_bearer(secret)).status_code == 401
    revoked_at = _listed(api)["bot"]["revoked_at"]
    assert revoked_at is not None

    again = api.client.delete(f"{KEYS}/bot", headers=api.headers("admin"))
    assert again.status_code == 204
    assert _listed(api)["bot"]["revoked_at"] == revoked_at  # the first revocation stands
    missing = api.client.delete(f"{KEYS}/nobody", headers=api.headers("admin"))
    assert missing.status_code == 404
    assert missing.json()["field"] == "name"


def test_an_expired_key_is_refused_when_it_expires(clocked_api: Api, clock: FakeClock) -> None:
    created = _create(clocked_api, name="short", role="ci", expires_in="2h").json()
    expires_at = datetime.fromisoformat(created["expires_at"])
    assert expires_at == datetime.fromisoformat(created["created_at"]) + timedelta(hours=2)
    headers = _bearer(created["key"])
    assert clocked_api.client.get("/schema/openapi.json", headers=headers).status_code == 200

    clock.advance(timedelta(hours=2) - timedelta(seconds=1))
    assert clocked_api.client.get("/schema/openapi.json", headers=headers).status_code == 200
    clock.advance(1)
    assert clocked_api.client.get("/schema/openapi.json", headers=headers).status_code == 401


def test_last_use_is_written_at_most_once_a_minute(clocked_api: Api, clock: FakeClock) -> None:
    headers = clocked_api.headers("procurement")
    assert _listed(clocked_api)["procurement"]["last_used_at"] is None
    updates: list[str] = []

    def record(*args: Any) -> None:
        if str(args[2]).lstrip().upper().startswith("UPDATE API_KEYS"):
            updates.append(str(args[2]))

    event.listen(clocked_api.runtime.db, "before_cursor_execute", record)
    first = clock.now()
    for _ in range(30):  # two minutes of requests, one every 4 s
        assert clocked_api.client.get("/v1/manifests", headers=headers).status_code == 200
        clock.advance(5)
    event.remove(clocked_api.runtime.db, "before_cursor_execute", record)

    assert 1 <= len(updates) <= 4
    used = datetime.fromisoformat(_listed(clocked_api)["procurement"]["last_used_at"])
    assert first <= used <= clock.now()
    assert clock.now() - used <= timedelta(seconds=61)


def test_another_replica_sees_a_revocation_within_a_refresh(
    clocked_api: Api, clock: FakeClock
) -> None:
    """principal_by_id (what a console session checks) and authenticate on a second
    KeyService on the same database, as another replica: the key goes within REFRESH_SECONDS."""
    other = KeyService(clocked_api.runtime.sessions, clock=clock)
    secret = _create(clocked_api, name="bot", role="procurement").json()["key"]
    principal = other.authenticate(secret)
    assert principal is not None
    assert other.principal_by_id(principal.key_id) == principal

    assert (
        clocked_api.client.delete(f"{KEYS}/bot", headers=clocked_api.headers("admin")).status_code
        == 204
    )
    assert clocked_api.runtime.keys.principal_by_id(principal.key_id) is None  # here: at once
    clock.advance(REFRESH_SECONDS)
    assert other.principal_by_id(principal.key_id) is None
    assert other.authenticate(secret) is None
