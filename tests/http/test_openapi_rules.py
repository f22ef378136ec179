"""The OpenAPI document declares the request rules the handlers enforce, and each declared
rule and the handler agree: a value the document allows is accepted, one it refuses is a 400.
(schemathesis drives the same rules with drawn values: test_schemathesis.py.)"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from supportgate.evaluations.dry_run import MAX_MANIFESTS as DRY_RUN_MAX
from supportgate.evaluations.services import MAX_IDEMPOTENCY_KEY
from supportgate.manifests.common import RFC3339_RE
from supportgate.openapi import NOT_NUL
from supportgate.reevaluation.views import MAX_MANIFESTS

from ..api import Api
from ..api_support import hardware, post


def _document(api: Api) -> dict[str, Any]:
    document: dict[str, Any] = api.client.app.openapi_schema.to_schema()
    return document


def _matches(pattern: str, value: str) -> bool:
    return re.search(pattern, value) is not None


@pytest.mark.parametrize(
    ("key", "accepted"),
    [
        ("ci-run-1234-step-7", True),
        ("a", True),
        ("~" * MAX_IDEMPOTENCY_KEY, True),
        ("with inner spaces", True),
        ("  padded  ", True),  # HTTP strips the spaces around a header value
        ("x" * (MAX_IDEMPOTENCY_KEY + 1), False),
        ("   ", False),
        ("tab\tinside", False),
        ("del\x7fchar", False),
    ],
)
def test_the_idempotency_key_pattern_is_what_the_service_accepts(
    sqlite_api: Api, key: str, accepted: bool
) -> None:
    (header,) = _document(sqlite_api)["paths"]["/v1/evaluations"]["post"]["parameters"]
    assert header["name"] == "Idempotency-Key"
    assert _matches(header["schema"]["pattern"], key) is accepted
    response = post(sqlite_api, hardware(), **{"Idempotency-Key": key})
    assert (response.status_code == 201) is accepted, response.text


def test_a_waivers_rule_is_one_of_the_loaded_deny_rules(sqlite_api: Api) -> None:
    waiver = _document(sqlite_api)["components"]["schemas"]["WaiverRequest"]
    assert waiver["properties"]["rule"]["enum"] == sorted(sqlite_api.runtime.waivers.deny_rules)
    assert "port.production" in waiver["properties"]["rule"]["enum"]
    assert "support.platform" not in waiver["properties"]["rule"]["enum"]  # a warn rule
    assert waiver["additionalProperties"] is False
    assert waiver["properties"]["name"]["pattern"].startswith("^[a-z0-9]")
    assert waiver["properties"]["expires_at"]["pattern"] == RFC3339_RE


@pytest.mark.parametrize(
    ("justification", "accepted"),
    [("approved by the board", True), ("  x  ", True), ("   ", False), ("\u3000\t", False)],
)
def test_the_justification_pattern_is_what_the_service_accepts(
    sqlite_api: Api, justification: str, accepted: bool
) -> None:
    waiver = _document(sqlite_api)["components"]["schemas"]["WaiverRequest"]
    assert _matches(waiver["properties"]["justification"]["pattern"], justification) is accepted
    body = {
        "rule": "port.production",
        "kind": "DeploymentManifest",
        "name": "trial",
        "justification": justification,
        "expires_at": (datetime.now(UTC) + timedelta(days=1)).isoformat(),
    }
    response = sqlite_api.client.post("/v1/waivers", json=body, headers=sqlite_api.headers("admin"))
    assert (response.status_code == 201) is accepted, response.text


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("https://hooks.example.com/supportgate", True),
        ("HTTP://93.184.215.14:8080/hook?team=infra#alerts", True),
        ("http://user:secret@receiver.internal/", False),  # no credentials in a URL
        ("ftp://example.com/", False),
        ("http://exa mple.com/", False),
        ("http://host:0/", False),
        ("http://host:65536/", False),
        ("http://under_score.example/", False),
        ("http://a..b/hooks", False),  # IDNA cannot encode it: no delivery could succeed
        ("http://[2606:4700::6810:84e5]:8080/", True),
        ("http://[fe80::1%25eth0]/", False),  # no zone ids
        ("http://999.1.1.1/", False),  # four numbers are an IPv4 address: not this one
        ("0", False),
    ],
)
def test_the_webhook_url_pattern_is_what_the_service_accepts(
    sqlite_api: Api, url: str, accepted: bool
) -> None:
    webhook = _document(sqlite_api)["components"]["schemas"]["WebhookCreate"]
    assert webhook["additionalProperties"] is False
    assert _matches(webhook["properties"]["url"]["pattern"], url) is accepted
    response = sqlite_api.client.post(
        "/v1/webhooks", json={"url": url}, headers=sqlite_api.headers("admin")
    )
    assert (response.status_code == 201) is accepted, response.text


def test_a_sweep_names_at_most_max_manifests(sqlite_api: Api) -> None:
    body = _document(sqlite_api)["paths"]["/v1/reevaluations"]["post"]["requestBody"]
    manifests = body["content"]["application/json"]["schema"]["properties"]["manifests"]
    assert manifests["anyOf"][0]["maxItems"] == MAX_MANIFESTS
    too_many = {"manifests": [{"kind": "HardwareManifest", "name": "a"}] * (MAX_MANIFESTS + 1)}
    response = sqlite_api.client.post(
        "/v1/reevaluations", json=too_many, headers=sqlite_api.headers("admin")
    )
    assert response.status_code == 400
    assert response.json()["field"] == "$.manifests"


def test_a_dry_run_holds_at_most_max_manifests(sqlite_api: Api) -> None:
    body = _document(sqlite_api)["paths"]["/v1/evaluations/dry-run"]["post"]["requestBody"]
    several = body["content"]["application/json"]["schema"]["oneOf"][-1]
    assert several["properties"]["manifests"]["maxItems"] == DRY_RUN_MAX


def test_free_string_parameters_exclude_nul(sqlite_api: Api) -> None:
    document = _document(sqlite_api)
    (owner,) = [
        p for p in document["paths"]["/v1/manifests"]["get"]["parameters"] if p["name"] == "owner"
    ]
    assert owner["schema"]["oneOf"][0]["pattern"] == NOT_NUL
    (name,) = [
        p
        for p in document["paths"]["/v1/manifests/{kind}/{name}"]["get"]["parameters"]
        if p["name"] == "name"
    ]
    assert name["schema"]["pattern"] == NOT_NUL
    response = sqlite_api.client.get(
        "/v1/manifests?owner=a%00b", headers=sqlite_api.headers("procurement")
    )
    assert response.status_code == 400
    assert response.json()["field"] == "owner"


@pytest.mark.parametrize(
    ("query", "field"),
    [("verdcit=rejected", "verdcit"), ("verdict=rejected&verdict=supported", "verdict")],
)
def test_an_unknown_or_repeated_query_parameter_is_400_naming_it(
    sqlite_api: Api, query: str, field: str
) -> None:
    response = sqlite_api.client.get(
        f"/v1/manifests?{query}", headers=sqlite_api.headers("procurement")
    )
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field
    assert "kind, limit, owner, verdict" in response.json()["detail"] or "once" in response.text


def test_declared_query_parameters_still_work(sqlite_api: Api) -> None:
    response = sqlite_api.client.get(
        "/v1/audit?verdict=rejected&limit=5&format=json", headers=sqlite_api.headers("procurement")
    )
    assert response.status_code == 200, response.text


def test_a_sweep_names_at_least_one_manifest(sqlite_api: Api) -> None:
    body = _document(sqlite_api)["paths"]["/v1/reevaluations"]["post"]["requestBody"]
    manifests = body["content"]["application/json"]["schema"]["properties"]["manifests"]
    assert manifests["anyOf"][0]["minItems"] == 1
    response = sqlite_api.client.post(
        "/v1/reevaluations", json={"manifests": []}, headers=sqlite_api.headers("admin")
    )
    assert response.status_code == 400
    assert response.json()["field"] == "$.manifests"


def test_the_rules_no_schema_keyword_can_say_are_declared_and_enforced(sqlite_api: Api) -> None:
    """A time relative to now, and addresses by what a name resolves to: the document says
    them in the description of what they constrain, and the handler refuses what they refuse."""
    api, document = sqlite_api, _document(sqlite_api)
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    for path in ("/v1/manifests", "/v1/reports/fleet", "/v1/reports/oscal"):
        [as_of] = [p for p in document["paths"][path]["get"]["parameters"] if p["name"] == "as_of"]
        assert "not after now" in as_of["description"], path
        refused = api.client.get(path, params={"as_of": tomorrow}, headers=api.headers("admin"))
        assert refused.status_code == 400, path
        assert refused.json()["field"] == "as_of"

    expires = document["components"]["schemas"]["WaiverRequest"]["properties"]["expires_at"]
    assert "in the future" in expires["description"]
    past = {
        "rule": "port.production",
        "kind": "DeploymentManifest",
        "name": "trial",
        "justification": "ticket PROC-1",
        "expires_at": (datetime.now(UTC) - timedelta(days=1)).isoformat(),
    }
    refused = api.client.post("/v1/waivers", json=past, headers=api.headers("admin"))
    assert refused.status_code == 400
    assert refused.json()["field"] == "$.expires_at"

    url = document["components"]["schemas"]["WebhookCreate"]["properties"]["url"]
    for reserved in ("localhost", "127.0.0.0/8", "10/8", "169.254/16", "SUPPORTGATE_WEBHOOK_ALLOW"):
        assert reserved in url["description"], reserved
    assert "400" in document["paths"]["/v1/webhooks"]["post"]["responses"]


def test_owners_on_an_admin_key_are_declared_refused(sqlite_api: Api) -> None:
    key = _document(sqlite_api)["components"]["schemas"]["KeyRequest"]
    assert {"properties": {"role": {"enum": ["ci", "procurement"]}}} in key["anyOf"]
    assert {"properties": {"owners": {"type": "array", "maxItems": 0}}} in key["anyOf"]
    for role, owners, status in (
        ("admin", ["team-a"], 400),
        ("admin", [], 201),
        ("ci", ["a"], 201),
    ):
        response = sqlite_api.client.post(
            "/v1/keys",
            json={"name": f"k-{role}-{len(owners)}", "role": role, "owners": owners},
            headers=sqlite_api.headers("admin"),
        )
        assert response.status_code == status, response.text


@pytest.mark.parametrize(
    ("path", "first_column"),
    [("/v1/audit", "id"), ("/v1/reports/fleet", "group")],
)
def test_a_csv_download_declares_its_columns(sqlite_api: Api, path: str, first_column: str) -> None:
    ok = _document(sqlite_api)["paths"][path]["get"]["responses"]["200"]["content"]
    assert "application/json" in ok
    assert ok["text/csv"]["schema"]["description"].startswith(f"columns: {first_column},")
