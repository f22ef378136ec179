"""Helpers for the API tests: example manifests as documents, posting them, counting rows."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import httpx
import yaml
from sqlalchemy import text

from .api import Api
from .examples import EXAMPLES, expected

DECISION_FIELDS = {
    "id",
    "manifest",
    "verdict",
    "allowed",
    "violations",
    "claims",
    "checklist",
    "recommendations",
    "matrix_version",
    "policy_revision",
    "input_digest",
    "evaluated_at",
    "cause",
    "leaf_index",  # the 201 body and every decision read back carry their entry's place
}


def example(name: str) -> dict[str, Any]:
    """An example manifest as a document (the examples quote every version)."""
    loaded = yaml.safe_load((EXAMPLES / name).read_text())
    assert isinstance(loaded, dict)
    return copy.deepcopy(loaded)


def post_examples(api: Api) -> list[dict[str, Any]]:
    """Post every example as YAML in tracking order (hardware first); the 201 bodies."""
    bodies = []
    for path in expected().files:
        response = api.post_manifest(path)
        assert response.status_code == 201, (path.name, response.text)
        bodies.append(response.json())
    return bodies


def hardware(name: str = "pool-a", **spec: Any) -> dict[str, Any]:
    """The H100 pool example renamed, with `spec` entries replaced."""
    doc = example("hw-h100-pool-a.yaml")
    doc["metadata"]["name"] = name
    doc["spec"].update(spec)
    return doc


def deployment(name: str = "trial", *, ref: str = "pool-a", **spec: Any) -> dict[str, Any]:
    """The H100 port-trial example renamed, on hardware `ref`, with `spec` entries replaced."""
    doc = example("dep-h100-port-trial.yaml")
    doc["metadata"]["name"] = name
    doc["spec"]["hardware"] = {"ref": ref}
    doc["spec"].update(spec)
    return doc


def post(
    api: Api,
    doc: dict[str, Any] | bytes,
    *,
    role: str | None = "ci",
    content_type: str | None = "application/json",
    **headers: str,
) -> httpx.Response:
    """POST /v1/evaluations with a document (as JSON) or raw bytes."""
    content = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    sent = dict(headers)
    if content_type is not None:
        sent["Content-Type"] = content_type
    return api.client.post("/v1/evaluations", content=content, headers=api.headers(role, **sent))


def created(api: Api, doc: dict[str, Any], **headers: str) -> dict[str, Any]:
    """POST a document that must be accepted; its decision."""
    response = post(api, doc, **headers)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


@dataclass(frozen=True)
class Rows:
    decisions: int
    decision_rules: int
    manifests: int
    idempotency_keys: int


def rows(api: Api) -> Rows:
    """How many rows the tables that requests write hold now."""
    with api.runtime.db.connect() as connection:
        counts = {
            table: int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())  # noqa: S608 - fixed names
            for table in ("decisions", "decision_rules", "manifests", "idempotency_keys")
        }
    return Rows(**counts)


def rule_ids(decision: dict[str, Any]) -> set[str]:
    return {violation["rule"] for violation in decision["violations"]}


def named(answer: dict[str, Any]) -> str:
    """The field an error answer names (ours and Litestar's validation errors alike)."""
    assert "field" in answer, answer
    return str(answer["field"])
