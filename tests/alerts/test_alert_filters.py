"""GET /v1/alerts filtered by kind, owner, cause and matrix version (with since and cursors),
and a 400 naming the parameter for a value it cannot take."""

from __future__ import annotations

from typing import Any

import pytest

from ..api import Api
from ..api_support import created, deployment, hardware
from ..matrix.test_matrix import matrix, publish, with_sm90
from ..reevaluation.test_reevaluation import get
from ..waiting import wait_until


def owned(doc: dict[str, Any], owner: str) -> dict[str, Any]:
    doc["metadata"]["owner"] = owner
    return doc


def alerts(api: Api, **params: str) -> list[dict[str, Any]]:
    """Every alert matching `params`, read page by page (3 a page: the filters hold across
    cursors)."""
    seen: list[dict[str, Any]] = []
    cursor: dict[str, str] = {}
    while True:
        page = get(api, "/v1/alerts", limit=3, **params, **cursor)
        seen += page["items"]
        if page["next_cursor"] is None:
            return seen
        cursor = {"cursor": page["next_cursor"]}


def swept(api: Api, version: str) -> bool:
    """Every tracked manifest's latest decision is under `version` (its sweep is done)."""
    items = get(api, "/v1/manifests")["items"]
    return all(m["latest_decision"]["matrix_version"] == version for m in items)


@pytest.fixture
def eight_alerts(api: Api) -> list[dict[str, Any]]:
    """Verdict changes of every cause the fleet can have: a matrix publish (sm90 listed) and
    its withdrawal, then a pool posted again with an old Python, which re-decides its
    deployment (cause hardware)."""
    created(api, owned(hardware("pool-a"), "team-a"))
    created(api, owned(hardware("pool-b"), "team-b"))
    created(api, owned(deployment("trial-a", ref="pool-a"), "team-a"))
    created(api, owned(deployment("trial-b", ref="pool-b"), "team-b"))
    publish(api, with_sm90("2026.12.1"))
    wait_until(lambda: len(alerts(api)) == 4, "four alerts")
    publish(api, with_sm90("2026.12.3"))  # the same verdicts: no alert
    wait_until(lambda: swept(api, "2026.12.3"), "the sweep of 2026.12.3")
    created(api, owned(hardware("pool-a", python="3.10.4"), "team-a"))  # rejected
    wait_until(lambda: len(alerts(api)) == 6, "six alerts")
    publish(api, matrix("2026.12.4"))  # sm90 unlisted: pool-b and trial-b back
    wait_until(lambda: len(alerts(api)) == 8, "eight alerts")
    return alerts(api)


def test_each_filter_keeps_exactly_its_alerts(api: Api, eight_alerts: list[dict[str, Any]]) -> None:
    every = eight_alerts
    owners = {"pool-a": "team-a", "trial-a": "team-a", "pool-b": "team-b", "trial-b": "team-b"}
    assert {a["cause"] for a in every} == {"matrix", "submission", "hardware"}
    cases: list[tuple[dict[str, str], Any]] = [
        ({"kind": "HardwareManifest"}, lambda a: a["manifest"]["kind"] == "HardwareManifest"),
        ({"owner": "team-a"}, lambda a: owners[a["manifest"]["name"]] == "team-a"),
        ({"cause": "submission"}, lambda a: a["cause"] == "submission"),
        ({"cause": "hardware"}, lambda a: a["cause"] == "hardware"),
        ({"matrix_version": "2026.12.4"}, lambda a: a["matrix_version"] == "2026.12.4"),
        (
            {"kind": "DeploymentManifest", "owner": "team-b", "cause": "matrix"},
            lambda a: a["manifest"]["name"] == "trial-b",
        ),
        ({"owner": "nobody"}, lambda a: False),
    ]
    for params, keeps in cases:
        wanted = [a["id"] for a in every if keeps(a)]
        assert [a["id"] for a in alerts(api, **params)] == wanted, params
        assert 0 < len(wanted) < len(every) or params == {"owner": "nobody"}, params
    since = every[5]["at"]
    assert [a["id"] for a in alerts(api, since=since, owner="team-b")] == [
        a["id"] for a in every[5:] if owners[a["manifest"]["name"]] == "team-b"
    ]


@pytest.mark.parametrize(
    ("param", "value"),
    [("kind", "Pod"), ("cause", "whenever"), ("since", "yesterday"), ("limit", "0")],
)
def test_a_bad_filter_is_a_400_naming_it(shared_api: Api, param: str, value: str) -> None:
    response = shared_api.client.get(
        "/v1/alerts", params={param: value}, headers=shared_api.headers("procurement")
    )
    assert response.status_code == 400, response.text
    assert response.json()["field"] == param
