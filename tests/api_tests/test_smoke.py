"""The API end to end as CI would use it: post the shared examples, read them back."""

from __future__ import annotations

from pathlib import Path

import yaml

from ..api import Api


def test_post_examples_and_read_back(api: Api, shared_examples: Path) -> None:
    expected = yaml.safe_load((shared_examples / "expected.yaml").read_text())
    order = sorted(expected, key=lambda name: not name.startswith("hw-"))
    for name in order:
        response = api.post_manifest(shared_examples / name)
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["verdict"] == expected[name]["verdict"], (name, body["violations"])
        assert body["cause"] == "submission"
        assert body["input_digest"].startswith("sha256:")
    listing = api.client.get("/v1/manifests", headers=api.headers("procurement")).json()
    assert len(listing["items"]) == len(expected)
    one = api.client.get(
        "/v1/manifests/DeploymentManifest/v41-flash-h100-trial", headers=api.headers("procurement")
    ).json()
    assert one["latest_decision"]["verdict"] == "experimental"


def test_roles_and_keys(api: Api, shared_examples: Path) -> None:
    assert api.client.get("/v1/manifests").status_code == 401
    assert (
        api.client.get("/v1/manifests", headers={"Authorization": "Bearer sg_nope"}).status_code
        == 401
    )
    assert api.client.get("/v1/manifests", headers=api.headers("ci")).status_code == 403
    assert api.client.get("/v1/manifests", headers=api.headers("procurement")).status_code == 200
    assert api.client.get("/health/live").status_code == 200
    assert api.client.get("/metrics").status_code == 200
    response = api.post_manifest(shared_examples / "hw-b200-pool.yaml", role="procurement")
    assert response.status_code == 201
