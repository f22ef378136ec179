"""The tracked-manifest endpoints as procurement and admins use them, on SQLite and
PostgreSQL: filters, cursor paging, one manifest, its history, untracking, 404s."""

from __future__ import annotations

from typing import Any

import pytest

from ..api import Api
from ..api_support import created, deployment, example, hardware, named, rows
from ..examples import expected

KINDS = {"hw": "HardwareManifest", "dep": "DeploymentManifest"}


def _post_all_examples(api: Api) -> dict[tuple[str, str], tuple[str, str]]:
    """Post every example as JSON (hardware first); (kind, name) -> (verdict, owner)."""
    tracked: dict[tuple[str, str], tuple[str, str]] = {}
    for file in expected().decisions:
        document = example(file)
        body = created(api, document)
        key = (body["manifest"]["kind"], body["manifest"]["name"])
        tracked[key] = (body["verdict"], document["metadata"]["owner"])
    return tracked


def _get(api: Api, path: str, **params: Any) -> Any:
    response = api.client.get(path, params=params, headers=api.headers("procurement"))
    assert response.status_code == 200, response.text
    return response.json()


def _all_pages(api: Api, path: str, **params: Any) -> list[list[dict[str, Any]]]:
    pages: list[list[dict[str, Any]]] = []
    cursor: str | None = None
    while True:
        page = _get(api, path, **params, **({"cursor": cursor} if cursor else {}))
        pages.append(page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) < 100, "paging does not end"


def _keys(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(item["kind"], item["name"]) for item in items]


def test_listing_filters_by_kind_verdict_and_owner(api: Api) -> None:
    tracked = _post_all_examples(api)
    assert len(tracked) == len(expected().decisions)

    def keys(keep: Any) -> list[tuple[str, str]]:
        found = sorted(
            key for key, (verdict, owner) in tracked.items() if keep(key, verdict, owner)
        )
        assert found, "the examples have a manifest for each filter here"
        return found

    everything = _get(api, "/v1/manifests")
    assert _keys(everything["items"]) == sorted(tracked)
    assert everything["next_cursor"] is None
    for item in everything["items"]:
        assert item["latest_decision"]["verdict"] == tracked[(item["kind"], item["name"])][0]
        assert item["latest_decision"]["manifest"] == {"kind": item["kind"], "name": item["name"]}

    for kind in KINDS.values():
        listed = _keys(_get(api, "/v1/manifests", kind=kind)["items"])
        assert listed == keys(lambda key, _v, _o, k=kind: key[0] == k)
    for verdict in ("supported", "experimental", "rejected"):
        listed = _keys(_get(api, "/v1/manifests", verdict=verdict)["items"])
        assert listed == keys(lambda _k, found, _o, v=verdict: found == v)

    research = _get(api, "/v1/manifests", owner="research")["items"]
    assert _keys(research) == keys(lambda _k, _v, owner: owner == "research")
    assert ("HardwareManifest", "rtx4090-workstation") in _keys(research)
    assert {item["owner"] for item in research} == {"research"}
    assert _get(api, "/v1/manifests", owner="nobody")["items"] == []

    combined = _get(
        api, "/v1/manifests", kind="DeploymentManifest", verdict="rejected", owner="ml-platform"
    )
    assert _keys(combined["items"]) == keys(
        lambda key, verdict, owner: (
            (key[0], verdict, owner) == ("DeploymentManifest", "rejected", "ml-platform")
        )
    )
    assert ("DeploymentManifest", "v41-flash-h100-prod") in _keys(combined["items"])


@pytest.mark.parametrize("limit", [1, 3, 7, 8, 500])
def test_cursor_paging_lists_every_manifest_once_in_order(api: Api, limit: int) -> None:
    for index in range(8):
        created(api, hardware(f"pool-{index:02d}"))
    pages = _all_pages(api, "/v1/manifests", limit=limit)
    assert all(len(page) <= limit for page in pages)
    assert all(pages), "no empty page before the end"
    flat = [key for page in pages for key in _keys(page)]
    assert flat == [("HardwareManifest", f"pool-{index:02d}") for index in range(8)]
    assert len(pages) == -(-8 // limit)


def test_paging_keeps_the_filters(api: Api) -> None:
    for index in range(5):
        created(api, hardware(f"h-{index}"))
        created(api, deployment(f"d-{index}", ref="missing-pool"))  # rejected: no hardware
    pages = _all_pages(api, "/v1/manifests", verdict="rejected", limit=2)
    assert [len(page) for page in pages] == [2, 2, 1]
    assert [key for page in pages for key in _keys(page)] == [
        ("DeploymentManifest", f"d-{index}") for index in range(5)
    ]


def test_one_manifest_is_its_canonical_content_and_latest_decision(api: Api) -> None:
    decision = created(api, example("hw-h100-pool-a.yaml"))
    one = _get(api, "/v1/manifests/HardwareManifest/h100-pool-a")
    assert set(one) == {
        "kind",
        "name",
        "owner",
        "content",
        "latest_decision",
        "tracked_since",
        "updated_at",
        "last_evaluated_at",
    }
    assert (one["kind"], one["name"], one["owner"]) == ("HardwareManifest", "h100-pool-a", "infra")
    # the 201 body, and the decision's leaf in the log (the 201 has it once the writer sets it)
    assert one["latest_decision"] == {
        "leaf_index": one["latest_decision"]["leaf_index"],
        **decision,
    }
    assert one["last_evaluated_at"] is not None
    content = one["content"]
    assert content["apiVersion"] == "supportgate/v1"
    assert content["kind"] == "HardwareManifest"
    assert content["metadata"] == {
        "name": "h100-pool-a",
        "owner": "infra",
        "labels": {"site": "fra1"},
    }
    assert content["spec"]["python"] == "3.12.3"
    assert content["spec"]["toolkit"] == {"name": "cuda", "version": "12.8"}


def test_history_is_newest_first_and_pages(api: Api) -> None:
    ids = [created(api, hardware("pool-a", nodes=nodes))["id"] for nodes in range(1, 6)]
    created(api, hardware("pool-b"))  # another manifest's decisions stay out of it
    path = "/v1/manifests/HardwareManifest/pool-a/history"

    full = _get(api, path)
    assert [d["id"] for d in full["items"]] == ids[::-1]
    assert full["next_cursor"] is None
    for decision in full["items"]:
        assert decision["manifest"] == {"kind": "HardwareManifest", "name": "pool-a"}

    pages = _all_pages(api, path, limit=2)
    assert [len(page) for page in pages] == [2, 2, 1]
    assert [d["id"] for page in pages for d in page] == ids[::-1]


def test_untracking_is_for_admins_and_keeps_the_history(api: Api) -> None:
    first = created(api, hardware("pool-a"))
    path = "/v1/manifests/HardwareManifest/pool-a"
    for role in ("ci", "procurement"):
        assert api.client.delete(path, headers=api.headers(role)).status_code == 403
    assert rows(api).manifests == 1

    deleted = api.client.delete(path, headers=api.headers("admin"))
    assert deleted.status_code == 204
    assert deleted.content == b""

    assert api.client.get(path, headers=api.headers("procurement")).status_code == 404
    assert _get(api, "/v1/manifests")["items"] == []
    history = _get(api, path + "/history")
    assert [d["id"] for d in history["items"]] == [first["id"]]
    assert rows(api).decisions == 1
    again = api.client.delete(path, headers=api.headers("admin"))
    assert again.status_code == 404

    second = created(api, hardware("pool-a"))
    assert _get(api, path)["latest_decision"]["id"] == second["id"]
    assert [d["id"] for d in _get(api, path + "/history")["items"]] == [second["id"], first["id"]]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/manifests/HardwareManifest/nothing-here"),
        ("GET", "/v1/manifests/DeploymentManifest/nothing-here/history"),
        ("DELETE", "/v1/manifests/DeploymentManifest/nothing-here"),
    ],
)
def test_unknown_manifests_are_404(api: Api, method: str, path: str) -> None:
    created(api, hardware("pool-a"))
    response = api.client.request(method, path, headers=api.headers("admin"))
    assert response.status_code == 404, response.text
    assert "nothing-here" in response.json()["detail"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/manifests/GpuManifest/pool-a"),
        ("GET", "/v1/manifests/GpuManifest/pool-a/history"),
        ("DELETE", "/v1/manifests/GpuManifest/pool-a"),
        ("GET", "/v1/manifests?kind=GpuManifest"),
    ],
)
def test_an_unknown_kind_is_400_naming_kind(api: Api, method: str, path: str) -> None:
    created(api, hardware("pool-a"))
    response = api.client.request(method, path, headers=api.headers("admin"))
    assert response.status_code == 400, response.text
    assert named(response.json()) == "kind"
    assert rows(api).manifests == 1
