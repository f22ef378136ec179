"""Who may call what: `ci` < `procurement` < `admin`; no key or an unknown key is 401, too
small a role 403; only health and metrics are open (the OpenAPI document needs a key too).

The 401/403 matrix runs over every route the app serves, so a route added later is covered
and must declare its role; routes the contract names must declare the contract's role.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from litestar.routes import HTTPRoute

from ..api import Api
from ..api_support import example, post, rows

ROLES = ("ci", "procurement", "admin")
CONTRACT_ROLES: dict[tuple[str, str], str | None] = {
    ("POST", "/v1/evaluations"): "ci",
    ("GET", "/v1/manifests"): "procurement",
    ("GET", "/v1/manifests/{kind}/{name}"): "procurement",
    ("GET", "/v1/manifests/{kind}/{name}/history"): "procurement",
    ("DELETE", "/v1/manifests/{kind}/{name}"): "admin",
    ("GET", "/v1/audit"): "procurement",
    ("GET", "/v1/matrix"): "procurement",
    ("GET", "/v1/matrix/versions"): "procurement",
    ("POST", "/v1/matrix"): "admin",
    ("POST", "/v1/matrix/impact"): "procurement",
    ("POST", "/v1/reevaluations"): "admin",
    ("GET", "/v1/reevaluations/{id}"): "admin",
    ("GET", "/v1/alerts"): "procurement",
    ("GET", "/v1/policy"): "procurement",
    ("POST", "/v1/webhooks"): "admin",
    ("POST", "/v1/waivers"): "admin",
    ("GET", "/v1/waivers"): "procurement",
    ("DELETE", "/v1/waivers/{id}"): "admin",
    ("GET", "/v1/keys"): "admin",
    ("POST", "/v1/keys"): "admin",
    ("DELETE", "/v1/keys/{name}"): "admin",
    ("GET", "/health/live"): None,
    ("GET", "/health/ready"): None,
    ("GET", "/metrics"): None,
    ("GET", "/schema/openapi.json"): "ci",
}
PATH_VALUES = {"kind": "HardwareManifest", "name": "nothing-here", "path": "openapi.json"}


@dataclass(frozen=True)
class Endpoint:
    method: str
    template: str
    role: str | None  # None: open to everyone
    url: str


def _value(name: str, kind: type) -> str:
    if name in PATH_VALUES:
        return PATH_VALUES[name]
    if kind is int:
        return "1"
    if kind is uuid.UUID:
        return str(uuid.uuid4())
    return "0.0.0" if name == "version" else "nothing-here"


OWN_CREDENTIAL = ["/v1/bundles/supportgate.tar.gz"]
"""Routes the API keys' guard lets through because they check a credential of their own: OPA
fetches the policy bundle with the bundle token (tests/policy/test_bundle.py), 404 when the
service has no bundle signing key."""


def endpoints(api: Api) -> list[Endpoint]:
    """Every method of every HTTP route the app serves (OPTIONS aside), with its role."""
    found: list[Endpoint] = []
    for route in api.client.app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        url = route.path_format
        for name, parameter in route.path_parameters.items():
            url = url.replace("{" + name + "}", _value(name, parameter.type))
        for handler in route.route_handlers:
            for method in sorted(handler.http_methods - {"OPTIONS"}):
                role = None if handler.opt.get("public") else handler.opt.get("role", "ci")
                found.append(Endpoint(method, route.path_format, role, url))
    return found


def _call(api: Api, endpoint: Endpoint, headers: dict[str, str]) -> Any:
    return api.client.request(endpoint.method, endpoint.url, headers=headers)


def test_routes_declare_the_contracts_roles(sqlite_api: Api) -> None:
    served = {(e.method, e.template): e.role for e in endpoints(sqlite_api)}
    for key, role in CONTRACT_ROLES.items():
        if key in served:
            assert served[key] == role, key
    assert ("POST", "/v1/evaluations") in served
    assert ("DELETE", "/v1/manifests/{kind}/{name}") in served
    public = sorted(template for (_, template), role in served.items() if role is None)
    assert public == ["/health/live", "/health/ready", "/metrics", *OWN_CREDENTIAL]


def test_every_route_needs_a_key_and_its_role(api: Api) -> None:
    served = endpoints(api)
    assert len(served) >= 10
    for endpoint in served:
        anonymous = _call(api, endpoint, {})
        unknown = _call(api, endpoint, {"Authorization": "Bearer sg_" + "x" * 43})
        if endpoint.template in OWN_CREDENTIAL:
            for headers in ({}, *(api.headers(role) for role in ROLES)):
                refused = _call(api, endpoint, headers)  # no API key opens it, not even admin's
                assert refused.status_code in {401, 404}, (endpoint, headers, refused.text)
            continue
        if endpoint.role is None:
            assert anonymous.status_code == 200, endpoint
            assert unknown.status_code == 200, endpoint
            continue
        assert anonymous.status_code == 401, (endpoint, anonymous.text)
        assert unknown.status_code == 401, (endpoint, unknown.text)
        assert "detail" in anonymous.json()
        needed = ROLES.index(endpoint.role)
        for rank, role in enumerate(ROLES):
            response = _call(api, endpoint, api.headers(role))
            if rank < needed:
                assert response.status_code == 403, (endpoint, role, response.text)
                assert endpoint.role in response.json()["detail"]
            else:
                assert response.status_code not in {401, 403}, (endpoint, role, response.text)


def test_the_openapi_document_needs_a_key(sqlite_api: Api) -> None:
    client = sqlite_api.client
    for path in ("/schema", "/schema/openapi.json", "/schema/openapi.yaml", "/schema/swagger"):
        assert client.get(path).status_code == 401, path
    response = client.get("/schema/openapi.json", headers=sqlite_api.headers("ci"))
    assert response.status_code == 200
    document = response.json()
    assert document["components"]["securitySchemes"]["apiKey"]["scheme"] == "bearer"
    evaluate = document["paths"]["/v1/evaluations"]["post"]
    assert evaluate["security"] == [{"apiKey": []}]
    assert "security" not in document["paths"]["/health/live"]["get"]


@pytest.mark.parametrize(
    "authorization",
    ["", "Bearer", "Bearer ", "Basic Y2k6eA==", "Token {key}", "{key}", "Bearer {key}x"],
)
def test_malformed_authorization_is_401(sqlite_api: Api, authorization: str) -> None:
    value = authorization.format(key=sqlite_api.keys["admin"])
    response = sqlite_api.client.get("/v1/manifests", headers={"Authorization": value})
    assert response.status_code == 401, response.text


def test_the_bearer_scheme_is_case_insensitive(sqlite_api: Api) -> None:
    for scheme in ("bearer", "BEARER", "Bearer"):
        headers = {"Authorization": f"{scheme} {sqlite_api.keys['procurement']}"}
        assert sqlite_api.client.get("/v1/manifests", headers=headers).status_code == 200


def test_refused_requests_write_nothing(api: Api) -> None:
    doc = example("hw-b200-pool.yaml")
    assert post(api, doc, role=None).status_code == 401
    unknown = {"Authorization": "Bearer sg_unknown"}
    assert post(api, doc, role=None, **unknown).status_code == 401
    assert rows(api).decisions == 0
    assert rows(api).manifests == 0
    assert post(api, doc, role="procurement").status_code == 201  # procurement has ci's rights
    assert post(api, doc, role="admin").status_code == 201
    assert rows(api).decisions == 2
