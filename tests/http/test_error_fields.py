"""Every 4xx that names an input names it in `field`, whoever refused it: our services, the
request hooks, or Litestar's own validation of parameters and JSON bodies."""

from __future__ import annotations

from typing import Any

import pytest

from ..api import Api
from ..api_support import hardware, post


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/manifests?limit=abc", "limit"),  # Litestar: not an integer
        ("/v1/manifests?limit=0", "limit"),  # ours: out of range
        ("/v1/manifests?verdcit=rejected", "verdcit"),  # not a parameter of the endpoint
        ("/v1/manifests?owner=%00", "owner"),  # a NUL character
        ("/v1/manifests?cursor=zz", "cursor"),
        ("/v1/audit?cursor=zz", "cursor"),
        ("/v1/audit?since=yesterday", "since"),
        ("/v1/manifests?kind=ServiceManifest", "kind"),
    ],
)
def test_a_bad_query_parameter_is_named(sqlite_api: Api, path: str, field: str) -> None:
    response = sqlite_api.client.get(path, headers=sqlite_api.headers("admin"))
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


def test_a_bad_manifest_field_is_named_by_its_json_path(sqlite_api: Api) -> None:
    response = post(sqlite_api, hardware(nodes=0))
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "$.spec.nodes"


@pytest.mark.parametrize("key", ["", "a" * 300, "tab\there"])
def test_a_bad_idempotency_key_is_named(sqlite_api: Api, key: str) -> None:
    response = post(sqlite_api, hardware(), **{"Idempotency-Key": key})
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "Idempotency-Key"


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/webhooks", {"description": "no url"}, "$.url"),  # Litestar: missing
        ("/v1/webhooks", {"url": 42}, "$.url"),  # Litestar: the wrong type
        ("/v1/webhooks", {"url": "ftp://hooks.example.com"}, "$.url"),  # ours
        ("/v1/reevaluations", {"manifests": [{"kind": "X", "name": "a"}]}, "$.manifests[0].kind"),
        ("/v1/reevaluations", {"manifests": []}, "$.manifests"),
    ],
)
def test_a_bad_json_body_field_is_named_by_its_json_path(
    sqlite_api: Api, path: str, body: dict[str, Any], field: str
) -> None:
    response = sqlite_api.client.post(path, json=body, headers=sqlite_api.headers("admin"))
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


WAIVER = (
    '{"rule": "port.production", "kind": "DeploymentManifest", "name": "trial",'
    ' "justification": "why", "expires_at": "2099-01-01T00:00:00Z"'
)


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/waivers", "not json", "$"),
        ("/v1/waivers", "", "$"),
        ("/v1/waivers", WAIVER + ', "rule": "host.os"}', "$.rule"),  # Litestar kept the last
        ("/v1/waivers", WAIVER.replace('"why"', '"\\ud800"') + "}", "$.justification"),
        ("/v1/webhooks", '{"url": ' + "9" * 5000 + "}", "$.url"),
        (
            "/v1/webhooks",
            '{"url": "https://hooks.example.com", "description": "\\u0000"}',
            "$.description",
        ),
        ("/v1/webhooks", '{"url": "https://hooks.example.com"} trailing', "$"),
    ],
)
def test_a_body_litestar_decodes_is_named_too(
    sqlite_api: Api, path: str, body: str, field: str
) -> None:
    """Waivers and webhooks take a typed JSON body: it is read under the manifests' rules."""
    headers = sqlite_api.headers("admin", **{"Content-Type": "application/json"})
    response = sqlite_api.client.post(path, content=body.encode(), headers=headers)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


@pytest.mark.parametrize(
    ("method", "path", "field"),
    [
        ("delete", "/v1/manifests/HardwareManifest/nowhere", "name"),
        ("get", "/v1/matrix/versions/1999.1.1", "version"),
        ("get", "/v1/reevaluations/nothing", "sweep_id"),
        ("delete", "/v1/waivers/nothing", "id"),
        ("delete", "/v1/webhooks/nothing", "webhook_id"),
    ],
)
def test_something_unknown_is_a_404_naming_its_parameter(
    sqlite_api: Api, method: str, path: str, field: str
) -> None:
    response = sqlite_api.client.request(method, path, headers=sqlite_api.headers("admin"))
    assert response.status_code == 404, response.text
    assert response.json()["field"] == field
