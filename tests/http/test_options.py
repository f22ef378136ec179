"""OPTIONS on a path answers 204 with `Allow: <every method of the path>`, without a key (a
CORS preflight sends none); a method a path lacks is 405 with the same `Allow`."""

from __future__ import annotations

import pytest
from litestar.routes import HTTPRoute

from ..api import Api

PATHS = {
    "/v1/manifests/HardwareManifest/pool-a": "DELETE, GET, OPTIONS",
    "/v1/manifests": "GET, OPTIONS",
    "/v1/matrix": "GET, OPTIONS, POST",
    "/v1/waivers": "GET, OPTIONS, POST",
    "/v1/webhooks": "GET, OPTIONS, POST",
    "/v1/evaluations": "OPTIONS, POST",
    "/health/live": "GET, OPTIONS",
}


@pytest.mark.parametrize(("path", "allow"), sorted(PATHS.items()))
def test_options_lists_every_method_without_a_key(sqlite_api: Api, path: str, allow: str) -> None:
    response = sqlite_api.client.options(path)
    assert response.status_code == 204, response.text
    assert response.headers["allow"] == allow


def test_every_routes_options_lists_its_methods(sqlite_api: Api) -> None:
    """Over every route the app serves, so a route added later is covered."""
    for route in sqlite_api.client.app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        path = route.path_format.replace("{kind}", "HardwareManifest")
        path = path.replace("{leaf_index}", "0")  # an integer parameter
        path = path.replace("{", "x").replace("}", "")  # any value reaches the route
        response = sqlite_api.client.options(path)
        assert response.status_code == 204, (path, response.text)
        assert response.headers["allow"] == ", ".join(sorted(route.methods)), path


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/v1/manifests/HardwareManifest/pool-a"),
        ("PATCH", "/v1/matrix"),
        ("HEAD", "/v1/waivers"),
    ],
)
def test_an_unsupported_method_is_405_with_allow(sqlite_api: Api, method: str, path: str) -> None:
    response = sqlite_api.client.request(method, path, headers=sqlite_api.headers("admin"))
    assert response.status_code == 405
    assert response.headers["allow"] == PATHS.get(path, "GET, OPTIONS, POST")


def test_an_unknown_path_is_404_without_allow(sqlite_api: Api) -> None:
    response = sqlite_api.client.options("/v1/nothing-here")
    assert response.status_code == 404
    assert "allow" not in response.headers


def test_other_methods_still_need_a_key(sqlite_api: Api) -> None:
    assert sqlite_api.client.get("/v1/manifests").status_code == 401
    assert sqlite_api.client.delete("/v1/manifests/HardwareManifest/pool-a").status_code == 401
