"""The matrix endpoints: current, versions, publish (JSON and YAML), roles and refusals."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import event

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.db import MatrixVersion
from supportgate.matrix.services import DEFAULT_PUBLISHER, MatrixService
from supportgate.policy import engine as policy_engine
from supportgate.policy.prepared import prepared_document

from ..api import Api

DEFAULT_VERSION = "2026.11.1"
SM90 = {
    "vendor": "nvidia",
    "arch": "sm90",
    "toolkit": {"name": "cuda", "min": "12.4", "below": "13"},
}


def default_matrix() -> dict[str, Any]:
    document = yaml.safe_load((DEFAULT_POLICY_DIR / "matrix" / "data.yaml").read_text())
    assert isinstance(document, dict)
    return document


def matrix(version: str, **changes: Any) -> dict[str, Any]:
    return {**default_matrix(), "version": version, **changes}


def with_sm90(version: str) -> dict[str, Any]:
    document = matrix(version)
    document["engines"]["deepinfer"]["platforms"].append(SM90)
    return document


def publish(api: Api, document: dict[str, Any], *, role: str = "admin", fmt: str = "yaml") -> Any:
    body = yaml.safe_dump(document, sort_keys=False) if fmt == "yaml" else json.dumps(document)
    return api.client.post(
        "/v1/matrix",
        content=body.encode(),
        headers=api.headers(role, **{"Content-Type": f"application/{fmt}"}),
    )


def get(api: Api, path: str, role: str | None = "procurement") -> Any:
    return api.client.get(path, headers=api.headers(role))


def test_current_is_the_default_matrix(api: Api) -> None:
    response = get(api, "/v1/matrix")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["version"] == DEFAULT_VERSION
    assert body["effective_from"] == "2026-11-01T00:00:00Z"
    assert body["published_by"] == DEFAULT_PUBLISHER
    assert body["published_at"].endswith("Z")
    assert (body["current"], body["pending"]) == (True, False)
    assert body["document"]["version"] == DEFAULT_VERSION
    assert body["document"]["engines"]["deepinfer"]["models"] == ["DeepSeek-V4.1-Flash"]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_publish_makes_the_new_version_current(api: Api, fmt: str) -> None:
    response = publish(api, matrix("2026.12.1"), fmt=fmt)
    assert response.status_code == 201, response.text
    published = response.json()
    assert published["version"] == "2026.12.1"
    assert published["published_by"] == "admin"  # the API key's name
    assert (published["current"], published["pending"]) == (True, False)
    assert published["document"]["version"] == "2026.12.1"

    current = get(api, "/v1/matrix").json()
    assert current["version"] == "2026.12.1"
    assert current["document"] == published["document"]

    versions = get(api, "/v1/matrix/versions").json()
    assert versions["next_cursor"] is None
    assert [(v["version"], v["current"]) for v in versions["items"]] == [
        ("2026.12.1", True),
        (DEFAULT_VERSION, False),
    ]
    assert "document" not in versions["items"][0]

    one = get(api, f"/v1/matrix/versions/{DEFAULT_VERSION}").json()
    assert (one["version"], one["current"]) == (DEFAULT_VERSION, False)
    assert one["document"]["version"] == DEFAULT_VERSION


def test_future_version_is_listed_but_not_current(api: Api) -> None:
    later = (datetime.now(UTC) + timedelta(days=30)).replace(microsecond=0)
    stamp = later.isoformat().replace("+00:00", "Z")
    response = publish(api, matrix("2027.1.1", effective_from=stamp))
    assert response.status_code == 201, response.text
    assert (response.json()["current"], response.json()["pending"]) == (False, True)

    assert get(api, "/v1/matrix").json()["version"] == DEFAULT_VERSION
    items = get(api, "/v1/matrix/versions").json()["items"]
    assert [(v["version"], v["current"], v["pending"]) for v in items] == [
        ("2027.1.1", False, True),  # newest effective first
        (DEFAULT_VERSION, True, False),
    ]
    assert items[0]["effective_from"] == stamp
    assert api.runtime.matrices.current().version == DEFAULT_VERSION


def test_duplicate_version_is_409_and_changes_nothing(api: Api) -> None:
    assert publish(api, matrix("2026.12.1")).status_code == 201
    again = publish(api, matrix("2026.12.1", evidence_max_age_days=30), fmt="json")
    assert again.status_code == 409, again.text
    assert "2026.12.1" in again.json()["detail"]
    current = get(api, "/v1/matrix").json()
    assert current["document"]["evidence_max_age_days"] == 90
    assert publish(api, default_matrix()).status_code == 409  # the default is a version too


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"evidence_max_age_days": -1}, "$.evidence_max_age_days"),
        ({"version": "no spaces allowed"}, "$.version"),
        ({"engines": {"deepinfer": {"models": [], "platforms": []}}}, "$.engines.deepinfer"),
        ({"default_engine": "vllm"}, "$.default_engine"),
        ({"surprise": True}, "$.surprise"),
    ],
)
def test_invalid_matrix_is_400_naming_the_field(
    api: Api, change: dict[str, Any], field: str
) -> None:
    response = publish(api, {**matrix("2026.12.1"), **change})
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["field"].startswith(field), body
    assert get(api, "/v1/matrix/versions").json()["items"][0]["version"] == DEFAULT_VERSION


def test_nested_field_path_and_unquoted_yaml_version(sqlite_api: Api) -> None:
    document = matrix("2026.12.1")
    document["engines"]["deepinfer"]["platforms"][0]["toolkit"]["min"] = "thirteen"
    response = publish(sqlite_api, document)
    assert response.status_code == 400
    assert response.json()["field"] == "$.engines.deepinfer.platforms[0].toolkit.min"

    text = yaml.safe_dump(matrix("2026.12.2"), sort_keys=False).replace("min: '3.12'", "min: 3.10")
    assert "min: 3.10" in text
    response = sqlite_api.client.post(
        "/v1/matrix",
        content=text.encode(),
        headers=sqlite_api.headers("admin", **{"Content-Type": "application/yaml"}),
    )
    assert response.status_code == 201, response.text
    assert response.json()["document"]["engines"]["deepinfer"]["host"]["python"]["min"] == "3.10"


def test_body_limits_and_media_types(sqlite_api: Api) -> None:
    headers = sqlite_api.headers("admin", **{"Content-Type": "application/json"})
    huge = json.dumps({**matrix("2026.12.1"), "padding": "x" * (1024 * 1024)})
    assert sqlite_api.client.post("/v1/matrix", content=huge, headers=headers).status_code == 413
    assert sqlite_api.client.post("/v1/matrix", content=b"", headers=headers).status_code == 400
    text_plain = sqlite_api.headers("admin", **{"Content-Type": "text/plain"})
    response = sqlite_api.client.post("/v1/matrix", content=b"version: x", headers=text_plain)
    assert response.status_code == 415
    assert len(get(sqlite_api, "/v1/matrix/versions").json()["items"]) == 1


def test_roles(api: Api) -> None:
    assert publish(api, matrix("2026.12.1"), role="ci").status_code == 403
    assert publish(api, matrix("2026.12.1"), role="procurement").status_code == 403
    no_key = api.client.post("/v1/matrix", content=b"{}")
    assert no_key.status_code == 401
    for path in ("/v1/matrix", "/v1/matrix/versions", f"/v1/matrix/versions/{DEFAULT_VERSION}"):
        assert get(api, path, role=None).status_code == 401
        assert get(api, path, role="ci").status_code == 403
        assert get(api, path, role="admin").status_code == 200
    assert len(get(api, "/v1/matrix/versions").json()["items"]) == 1


def test_unknown_version_is_404(sqlite_api: Api) -> None:
    response = get(sqlite_api, "/v1/matrix/versions/1999.1.1")
    assert response.status_code == 404
    assert "1999.1.1" in response.json()["detail"]


def test_new_decisions_use_the_published_matrix(api: Api, examples_dir: Path) -> None:
    pool = examples_dir / "hw-h100-pool-a.yaml"
    before = api.post_manifest(pool).json()
    assert (before["verdict"], before["matrix_version"]) == ("experimental", DEFAULT_VERSION)

    assert publish(api, with_sm90("2026.12.1-sm90")).status_code == 201
    after = api.post_manifest(pool)
    assert after.status_code == 201, after.text
    decision = after.json()
    assert decision["verdict"] == "supported", decision["violations"]
    assert decision["matrix_version"] == "2026.12.1-sm90"
    assert "support.platform" not in {v["rule"] for v in decision["violations"]}


def test_a_publication_reads_and_prepares_each_version_once(
    sqlite_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """POST /v1/matrix and the sweep it starts, then another replica's service over the same
    database: a version's row is read at most once per service (the publishing one reads its
    own not at all) and prepared once per service, however often the versions are reloaded."""
    runtime = sqlite_api.runtime
    assert runtime.reevaluation.wait_idle()
    reads: list[str] = []
    prepared: list[str] = []

    def read(row: MatrixVersion, _context: Any) -> None:
        reads.append(row.version)

    def prepare(document: Any) -> dict[str, Any]:
        prepared.append(document["version"])
        return prepared_document(document)

    monkeypatch.setattr(policy_engine, "prepared_document", prepare)
    event.listen(MatrixVersion, "load", read)
    try:
        assert publish(sqlite_api, with_sm90("2026.12.1")).status_code == 201
        assert runtime.reevaluation.wait_idle()
        runtime.matrices.versions(reload=True)
        assert (reads, prepared) == ([], ["2026.12.1"])

        replica = MatrixService(runtime.sessions, ledger=runtime.ledger)
        for _ in range(3):
            replica.versions(reload=True)
        assert replica.current().version == "2026.12.1"
    finally:
        event.remove(MatrixVersion, "load", read)
    assert sorted(reads) == [DEFAULT_VERSION, "2026.12.1"]
    assert sorted(prepared) == [DEFAULT_VERSION, "2026.12.1", "2026.12.1"]
