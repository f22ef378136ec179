"""The API's edges (issue 23 part 10): an empty `cursor=` is the first page of every paged
endpoint; a missing required query parameter is a 400 naming it; a body of only whitespace
is a 400 wherever a body is read, and never starts a sweep."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ..api import Api
from ..api_support import created, hardware, named


def _paged(api: Api) -> list[str]:
    """A path of every endpoint that answers in cursor pages."""
    created(api, hardware("pool-a"))
    hook = api.client.post(
        "/v1/webhooks", json={"url": "https://receiver.example/hooks"}, headers=api.headers("admin")
    )
    assert hook.status_code == 201, hook.text
    yesterday = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    return [
        "/v1/manifests",
        f"/v1/manifests?as_of={yesterday.replace('+', '%2B')}",
        "/v1/manifests/HardwareManifest/pool-a/history",
        "/v1/audit",
        "/v1/alerts",
        "/v1/waivers",
        f"/v1/webhooks/{hook.json()['id']}/deliveries",
    ]


def test_an_empty_cursor_is_the_first_page_everywhere(api: Api) -> None:
    for path in _paged(api):
        first = api.client.get(path, headers=api.headers("admin"))
        assert first.status_code == 200, (path, first.text)
        joiner = "&" if "?" in path else "?"
        empty = api.client.get(f"{path}{joiner}cursor=", headers=api.headers("admin"))
        assert empty.status_code == 200, (path, empty.text)
        assert empty.json()["items"] == first.json()["items"], path


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/audit/proof/inclusion?tree_size=1", "leaf_index"),
        ("/v1/audit/proof/inclusion?leaf_index=0", "tree_size"),
        ("/v1/audit/proof/consistency?second=1", "first"),
    ],
)
def test_a_missing_query_parameter_is_a_400_naming_it(
    shared_api: Api, path: str, field: str
) -> None:
    response = shared_api.client.get(path, headers=shared_api.headers("admin"))
    assert response.status_code == 400, response.text
    assert named(response.json()) == field


@pytest.mark.parametrize("body", [b" ", b"\n\t \r\n"])
def test_a_whitespace_body_is_a_400_and_starts_no_sweep(api: Api, body: bytes) -> None:
    created(api, hardware("pool-a"))
    for path in (
        "/v1/reevaluations",
        "/v1/evaluations",
        "/v1/evaluations/dry-run",
        "/v1/matrix",
        "/v1/matrix/impact",
        "/v1/waivers",
        "/v1/webhooks",
        "/v1/keys",
    ):
        response = api.client.post(
            path,
            content=body,
            headers={**api.headers("admin"), "Content-Type": "application/json"},
        )
        assert response.status_code == 400, (path, response.text)
        assert named(response.json()) == "$", (path, response.text)
    with api.runtime.db.connect() as connection:
        sweeps = connection.exec_driver_sql("SELECT count(*) FROM sweeps").scalar_one()
    assert sweeps == 0


def test_no_body_still_sweeps_everything(api: Api) -> None:
    created(api, hardware("pool-a"))
    response = api.client.post("/v1/reevaluations", headers=api.headers("admin"))
    assert response.status_code == 202, response.text


def test_a_malformed_host_header_is_a_400_naming_it(sqlite_api: Api) -> None:
    """Litestar refuses it before any handler; the answer still names the field, as every 400
    does, and other refusals keep their headers."""
    response = sqlite_api.client.get(
        "/v1/manifests", headers={**sqlite_api.headers("procurement"), "host": "#CO=F"}
    )
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "Host"
