"""Idempotency-Key judges "the same body" on the canonical document, on SQLite and PostgreSQL:
bodies that decode to the same manifest (other whitespace, key order, YAML or JSON, `8.0` for
`8`, a time's offset) replay the first response; another manifest is still 409."""

from __future__ import annotations

import json
from typing import Any

import yaml

from ..api import Api
from ..api_support import deployment, hardware, post, rows

KEY = "ci-run-77-step-2"


def _with_evidence_at(at: str) -> dict[str, Any]:
    doc = deployment("trial", ref="h100-pool-a")
    doc["spec"]["evidence"] = {"build": {"status": "passed", "at": at}}
    return doc


def _reordered(node: Any) -> Any:
    """`node` with the keys of every object in reverse order."""
    if isinstance(node, dict):
        return {key: _reordered(node[key]) for key in reversed(node)}
    if isinstance(node, list):
        return [_reordered(item) for item in node]
    return node


def test_the_same_manifest_written_otherwise_replays(api: Api) -> None:
    doc = hardware("pool-a")
    first = post(api, doc, **{"Idempotency-Key": KEY})
    assert first.status_code == 201, first.text
    after_first = rows(api)
    spellings = {
        "indented": json.dumps(doc, indent=4).encode(),
        "compact": json.dumps(doc, separators=(",", ":")).encode(),
        "keys reordered": json.dumps(_reordered(doc)).encode(),
        "integral float": json.dumps(doc).replace('"nodes": 8', '"nodes": 8.0').encode(),
        "trailing newlines": json.dumps(doc).encode() + b"\n\n",
    }
    assert b'"nodes": 8.0' in spellings["integral float"]
    for name, body in spellings.items():
        again = post(api, body, **{"Idempotency-Key": KEY})
        assert (again.status_code, again.content) == (201, first.content), (name, again.text)
    as_yaml = yaml.safe_dump(doc, sort_keys=True).encode()
    again = post(api, as_yaml, content_type="application/yaml", **{"Idempotency-Key": KEY})
    assert (again.status_code, again.content) == (201, first.content), again.text
    assert rows(api) == after_first


def test_a_time_in_another_offset_is_the_same_time(api: Api) -> None:
    assert post(api, hardware("h100-pool-a")).status_code == 201
    first = post(api, _with_evidence_at("2026-11-20T12:00:00+02:00"), **{"Idempotency-Key": KEY})
    assert first.status_code == 201, first.text
    before = rows(api)
    again = post(api, _with_evidence_at("2026-11-20T10:00:00Z"), **{"Idempotency-Key": KEY})
    assert (again.status_code, again.content) == (201, first.content), again.text
    other = post(api, _with_evidence_at("2026-11-20T10:00:01Z"), **{"Idempotency-Key": KEY})
    assert other.status_code == 409, other.text
    assert other.json()["field"] == "Idempotency-Key"
    assert rows(api) == before


def test_a_body_that_does_not_decode_is_400_under_a_used_key(api: Api) -> None:
    assert post(api, hardware("pool-a"), **{"Idempotency-Key": KEY}).status_code == 201
    before = rows(api)
    broken = post(api, hardware("pool-a", nodes=0), **{"Idempotency-Key": KEY})
    assert broken.status_code == 400, broken.text
    assert broken.json()["field"] == "$.spec.nodes"
    assert rows(api) == before
