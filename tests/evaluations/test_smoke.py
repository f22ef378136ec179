"""The API end to end as CI would use it: post the examples, read them back."""

from __future__ import annotations

from pathlib import Path

from ..api import Api
from ..api_support import post_examples
from ..examples import expected


def test_post_examples_and_read_back(api: Api) -> None:
    wanted = expected().decisions
    bodies = post_examples(api)
    for name, body in zip(wanted, bodies, strict=True):
        assert body["verdict"] == wanted[name].verdict, (name, body["violations"])
        assert body["cause"] == "submission"
        assert body["input_digest"].startswith("sha256:")
    listing = api.client.get("/v1/manifests", headers=api.headers("procurement")).json()
    assert len(listing["items"]) == len(wanted)
    one = api.client.get(
        "/v1/manifests/DeploymentManifest/v41-flash-h100-trial", headers=api.headers("procurement")
    ).json()
    assert one["latest_decision"]["verdict"] == "experimental"


def test_roles_and_keys(api: Api, examples_dir: Path) -> None:
    assert api.client.get("/v1/manifests").status_code == 401
    assert (
        api.client.get("/v1/manifests", headers={"Authorization": "Bearer sg_nope"}).status_code
        == 401
    )
    assert api.client.get("/v1/manifests", headers=api.headers("ci")).status_code == 403
    assert api.client.get("/v1/manifests", headers=api.headers("procurement")).status_code == 200
    assert api.client.get("/health/live").status_code == 200
    assert api.client.get("/metrics").status_code == 200
    response = api.post_manifest(examples_dir / "hw-b200-pool.yaml", role="procurement")
    assert response.status_code == 201
