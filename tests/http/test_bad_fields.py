"""Every text, number and time field of every request body, spoiled one at a time, on SQLite
and PostgreSQL: a 400 naming that field, and not one row written in any table.

The fields are read from the bodies' types (msgspec.inspect), not listed here, so a field
added to a manifest, the matrix or a request is covered without touching this file. Each is
spoiled in the ways that were once a 5xx or slipped through: a NUL character in text (or in a
map key), integers too long for Python to read (5,000 digits, `0x` and 20,000 hex digits),
numbers the policy engines cannot read (10**310, 1e999) or read inexactly (2**53), and times
outside the years the policies compare (before 1678: evidence.stale could not see them).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

import msgspec
import pytest
import yaml
from msgspec import inspect as mi
from sqlalchemy import inspect as sql_inspect
from sqlalchemy import text

from supportgate.app import create_app
from supportgate.auth.views import KeyRequest
from supportgate.config import Settings
from supportgate.manifests import DeploymentManifest, HardwareManifest, Matrix
from supportgate.manifests._raw import join
from supportgate.manifests.decode import decode_json, decode_manifest, decode_matrix
from supportgate.manifests.deployment import Evidence
from supportgate.reevaluation.views import SweepRequest
from supportgate.waivers.views import WaiverRequest
from supportgate.webhooks.views import WebhookCreate

from ..api import Api
from ..api_support import example, post
from ..examples import EXAMPLES
from ..matrix.test_matrix import default_matrix

Kind = Literal["text", "key", "integer", "number", "time"]
KEY: Final = object()
"""A path segment: the first entry of a map (a new one, `k`, when the map is empty)."""
Segment = str | int | object


@dataclass(frozen=True)
class Leaf:
    """A place in a body that holds text, a number or a time; `key`: a map's keys."""

    path: tuple[Segment, ...]
    kind: Kind


def leaves(target: Any) -> list[Leaf]:
    """Every text, number, time and map-key place of `target` (a Struct type)."""
    return list(_walk(mi.type_info(target), ()))


def _walk(kind: mi.Type, path: tuple[Segment, ...]) -> Iterator[Leaf]:
    if isinstance(kind, mi.Metadata):
        yield from _walk(kind.type, path)
    elif isinstance(kind, mi.UnionType):
        for member in kind.types:
            yield from _walk(member, path)
    elif isinstance(kind, mi.StructType):
        if kind.tag_field is not None:
            yield Leaf((*path, kind.tag_field), "text")
        for field in kind.fields:
            yield from _walk(field.type, (*path, field.encode_name))
    elif isinstance(kind, mi.DictType):
        yield Leaf(path, "key")
        yield from _walk(kind.value_type, (*path, KEY))
    elif isinstance(kind, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        yield from _walk(kind.item_type, (*path, 0))
    else:
        yield from _scalar(kind, path)


SCALARS: Final[tuple[tuple[type[mi.Type], Kind], ...]] = (
    (mi.StrType, "text"),
    (mi.LiteralType, "text"),
    (mi.IntType, "integer"),
    (mi.FloatType, "number"),
    (mi.DateTimeType, "time"),
)


def _scalar(kind: mi.Type, path: tuple[Segment, ...]) -> Iterator[Leaf]:
    found = [name for scalar, name in SCALARS if isinstance(kind, scalar)]
    assert found or isinstance(kind, mi.BoolType | mi.NoneType), kind  # a type not walked yet
    for name in found:
        yield Leaf(path, name)


def _step(node: Any, segment: Segment) -> Any:
    if segment is KEY:
        return next(iter(node), "k")
    return segment


def _reach(doc: dict[str, Any], path: tuple[Segment, ...], depth: int) -> tuple[Any, str]:
    """The map or list at `path[:depth]` in `doc`, made where missing (a list where the next
    segment of `path` is an index), and its JSON path."""
    node: Any = doc
    where = "$"
    for position, segment in enumerate(path[:depth]):
        step = _step(node, segment)
        where = join(where, step)
        wants_list = position + 1 < len(path) and isinstance(path[position + 1], int)
        if isinstance(node, list):
            if not node or not isinstance(node[0], dict | list):
                node[:1] = [[] if wants_list else {}]
            node = node[0]
        else:
            if not isinstance(node.get(step), dict | list):
                node[step] = [] if wants_list else {}
            node = node[step]
    return node, where


def put(doc: dict[str, Any], path: tuple[Segment, ...], value: Any) -> str:
    """Set `value` at `path` in `doc`, making the maps and lists on the way; its JSON path."""
    container, where = _reach(doc, path, len(path) - 1)
    last = _step(container, path[-1])
    if isinstance(container, list):
        container[:1] = [value]
    else:
        container[last] = value
    return join(where, last)


def put_key(doc: dict[str, Any], path: tuple[Segment, ...], key: str) -> str:
    """Rename the first key of the map at `path` to `key` (or add it); the map's JSON path."""
    mapping, where = _reach(doc, path, len(path))
    first = next(iter(mapping), None)
    mapping[key] = "x" if first is None else mapping.pop(first)
    return where


NUMBER: Final = "@@number@@"
"""Stands in the dumped body for a number written as raw text."""

SPOILT: Final[dict[Kind, list[tuple[str, Any]]]] = {
    "text": [("nul", "a\x00b")],
    "key": [("nul", "a\x00")],
    "integer": [
        ("5000-digits", "9" * 5000),
        ("10**310", "1" + "0" * 310),
        ("2**53", str(2**53)),
        ("1e999", "1e999"),
    ],
    "number": [("5000-digits", "9" * 5000), ("10**310", "1" + "0" * 310), ("1e999", "1e999")],
    "time": [
        ("before-1678", "1600-01-01T00:00:00Z"),
        ("last-moment-before-1678", "1677-12-31T23:59:59.999999Z"),
        ("after-2261", "2262-04-12T00:00:00Z"),
        ("year-9999", "9999-12-31T23:59:59Z"),
    ],
}
YAML_ONLY: Final[dict[Kind, list[tuple[str, str]]]] = {
    "integer": [("0x-20000-hex-digits", "0x" + "f" * 20_000)],
}


@dataclass(frozen=True)
class Endpoint:
    path: str
    role: str
    target: Any
    doc: dict[str, Any]
    yaml: bool  # whether the endpoint also reads YAML


def _future() -> str:
    return (datetime.now(UTC) + timedelta(days=30)).isoformat().replace("+00:00", "Z")


def endpoints() -> list[Endpoint]:
    deployment = example("dep-b200-online.yaml")
    deployment["spec"]["evidence"] = {  # every item, with a time
        field.encode_name: {"status": "passed", "at": "2026-11-01T00:00:00Z"}
        for field in msgspec.structs.fields(Evidence)
    }
    matrix = {**default_matrix(), "version": "2099.1.1", "effective_from": "2026-01-01T00:00:00Z"}
    waiver = {
        "rule": "port.production",
        "kind": "DeploymentManifest",
        "name": "trial",
        "justification": "a vendor fix is due next week",
        "expires_at": _future(),
    }
    webhook = {"url": "https://hooks.example.com/supportgate", "description": "alerts"}
    sweep = {"manifests": [{"kind": "HardwareManifest", "name": "h100-pool-a"}]}
    key = {"name": "team-a-ci", "role": "ci", "owners": ["team-a"], "expires_in": "90d"}
    return [
        Endpoint("/v1/evaluations", "ci", HardwareManifest, example("hw-h100-pool-a.yaml"), True),
        Endpoint("/v1/evaluations", "ci", DeploymentManifest, deployment, True),
        Endpoint(
            "/v1/evaluations/dry-run", "ci", HardwareManifest, example("hw-b200-pool.yaml"), True
        ),
        Endpoint("/v1/evaluations/dry-run", "ci", DeploymentManifest, deployment, True),
        Endpoint("/v1/matrix", "admin", Matrix, matrix, True),
        Endpoint("/v1/matrix/impact", "procurement", Matrix, matrix, True),
        Endpoint("/v1/waivers", "admin", WaiverRequest, waiver, False),
        Endpoint("/v1/webhooks", "admin", WebhookCreate, webhook, False),
        Endpoint("/v1/reevaluations", "admin", SweepRequest, sweep, False),
        Endpoint("/v1/keys", "admin", KeyRequest, key, False),
    ]


def _valid(endpoint: Endpoint) -> None:
    """The unspoilt document decodes: the refusals below are the spoilt field's."""
    body = json.dumps(endpoint.doc).encode()
    if endpoint.target is Matrix:
        decode_matrix(body, fmt="json")
    elif endpoint.target in (HardwareManifest, DeploymentManifest):
        decode_manifest(body, fmt="json")
    else:
        decode_json(body, endpoint.target)


def _body(doc: dict[str, Any], raw: str | None, fmt: str) -> bytes:
    if fmt == "json":
        dumped = json.dumps(doc)
        return (dumped if raw is None else dumped.replace(f'"{NUMBER}"', raw)).encode()
    dumped = yaml.safe_dump(doc, sort_keys=False)
    return (dumped if raw is None else dumped.replace(NUMBER, raw)).encode()


@dataclass(frozen=True)
class Case:
    name: str
    body: bytes
    content_type: str
    field: str


def cases(endpoint: Endpoint) -> Iterator[Case]:
    formats = ["json", "yaml"] if endpoint.yaml else ["json"]
    for leaf in leaves(endpoint.target):
        for fmt in formats:
            spoilt = SPOILT[leaf.kind] + (YAML_ONLY.get(leaf.kind, []) if fmt == "yaml" else [])
            for how, value in spoilt:
                doc = copy.deepcopy(endpoint.doc)
                number = leaf.kind in ("integer", "number")
                if leaf.kind == "key":
                    field = put_key(doc, leaf.path, value)
                else:
                    field = put(doc, leaf.path, NUMBER if number else value)
                media = "application/json" if fmt == "json" else "application/yaml"
                body = _body(doc, value if number else None, fmt)
                yield Case(f"{endpoint.path} {fmt} {field} {how}", body, media, field)


def table_rows(api: Api) -> dict[str, int]:
    """How many rows every table holds."""
    with api.runtime.db.connect() as connection:
        tables = sorted(sql_inspect(connection).get_table_names())
        return {
            table: int(connection.execute(text(f'SELECT count(*) FROM "{table}"')).scalar_one())  # noqa: S608 - names from the schema
            for table in tables
        }


def test_the_fields_are_read_from_the_types() -> None:
    """A guard on the walk itself: the fields it finds include ones of every kind."""
    found = {(leaf.kind, join("$", str(leaf.path[-1]))) for leaf in leaves(DeploymentManifest)}
    assert {("text", "$.kind"), ("integer", "$.prefill_gpus"), ("number", "$.memory_gib")} <= found
    assert ("time", "$.at") in found
    assert ("time", "$.effective_from") in {
        (leaf.kind, join("$", str(leaf.path[-1]))) for leaf in leaves(Matrix)
    }
    assert {leaf.kind for leaf in leaves(Matrix)} >= {"text", "key", "integer", "time"}


def test_every_operation_that_takes_a_body_is_spoilt() -> None:
    """A new endpoint with a body fails here until it has its Endpoint above."""
    document = create_app(Settings(database_url="sqlite://")).openapi_schema.to_schema()
    with_bodies = {
        path
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in ("post", "put", "patch") and "requestBody" in operation
    }
    assert with_bodies == {endpoint.path for endpoint in endpoints()}


def test_the_documents_spoilt_are_valid() -> None:
    for endpoint in endpoints():
        _valid(endpoint)
        times = [leaf for leaf in leaves(endpoint.target) if leaf.kind == "time"]
        for leaf in times:  # a time is judged after its object's other fields: they must be there
            doc = copy.deepcopy(endpoint.doc)
            parent: Any = doc
            for segment in leaf.path[:-1]:
                step = _step(parent, segment)
                assert step in parent or isinstance(step, int), (endpoint.path, leaf.path)
                parent = parent[step]


def test_every_spoilt_field_is_a_400_naming_it_and_writes_nothing(api: Api) -> None:
    assert api.runtime.reevaluation.wait_idle()
    before = table_rows(api)
    wrong: dict[str, Any] = {}
    count = 0
    for endpoint in endpoints():
        headers = api.headers(endpoint.role)
        for case in cases(endpoint):
            count += 1
            sent = {**headers, "Content-Type": case.content_type}
            response = api.client.post(endpoint.path, content=case.body, headers=sent)
            answer = response.json() if response.content else {}
            if (response.status_code, answer.get("field")) != (400, case.field):
                wrong[case.name] = (response.status_code, answer.get("detail", "")[:300])
        after = table_rows(api)
        if after != before:
            wrong[f"{endpoint.path} {endpoint.target.__name__}: rows written"] = {
                table: after[table] - before[table]
                for table in after
                if after[table] != before[table]
            }
            before = after
    assert count > 400  # the walk found the fields (a broken walk finds few)
    assert not wrong, json.dumps(wrong, indent=1)


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_the_unspoilt_documents_are_accepted(api: Api, fmt: str) -> None:
    """The same documents, unspoilt, get through (so the 400s above are the spoilt field's)."""
    pool = post(api, (EXAMPLES / "hw-b200-pool.yaml").read_bytes(), content_type="application/yaml")
    assert pool.status_code == 201, pool.text
    for endpoint in endpoints():
        if endpoint.target is WebhookCreate or (fmt == "yaml" and not endpoint.yaml):
            continue  # a subscription's URL must reach a receiver; test_webhooks.py posts them
        body = _body(endpoint.doc, None, fmt)
        media = "application/json" if fmt == "json" else "application/yaml"
        response = api.client.post(
            endpoint.path,
            content=body,
            headers=api.headers(endpoint.role, **{"Content-Type": media}),
        )
        assert response.status_code < 300, (endpoint.path, response.text)


def test_the_largest_accepted_values_are_decided_swept_and_stored(api: Api) -> None:
    """The other side of the limits: 2**53 - 1, the largest double and the first and last
    accepted times are judged, recorded and re-evaluated on both databases, never a 5xx."""
    largest = 2**53 - 1
    pool = example("hw-h100-pool-a.yaml")
    pool["spec"]["nodes"] = largest
    pool["spec"]["accelerator"].update(per_node=largest, memory_gib=1.7976931348623157e308)
    trial = example("dep-h100-port-trial.yaml")
    trial["spec"]["topology"] = {"prefill_gpus": largest, "decode_gpus": largest}
    trial["spec"]["evidence"] = {
        "build": {"status": "passed", "at": "1678-01-01T00:00:00Z"},
        "performance": {"status": "passed", "at": "2261-12-31T23:59:59Z", "concurrency": largest},
    }
    for doc in (pool, trial):
        response = post(api, doc)
        assert response.status_code == 201, response.text
    stale = {v["path"] for v in response.json()["violations"] if v["rule"] == "evidence.stale"}
    assert stale == {"spec.evidence.build"}
    matrix = {**default_matrix(), "version": "2099.1.2", "evidence_max_age_days": largest}
    for path in ("/v1/matrix/impact", "/v1/matrix"):
        response = api.client.post(
            path,
            content=json.dumps(matrix).encode(),
            headers=api.headers("admin", **{"Content-Type": "application/json"}),
        )
        assert response.status_code < 300, (path, response.text)
    assert api.runtime.reevaluation.wait_idle()
    with api.runtime.db.connect() as connection:
        sweeps = connection.execute(text("SELECT cause, status, failed FROM sweeps")).all()
    assert ("matrix", "finished", 0) in {tuple(sweep) for sweep in sweeps}, sweeps
    assert {sweep.failed for sweep in sweeps} == {0}, sweeps
