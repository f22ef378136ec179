"""schemathesis over every operation of the OpenAPI document, in-process (ASGI), with an admin
key, on SQLite and PostgreSQL, with every check schemathesis has: requests that fit the
schema must be accepted and requests that do not must be refused (4xx); no answer may be a
5xx; every answer must be one the document declares (status, media type, headers, body).

What a schema cannot say, and so what positive cases are given instead of what schemathesis
draws (each is a documented rule, tested elsewhere):
- `cursor`: opaque, only one an endpoint gave out is valid; positive cases send none.
- a waiver's `expires_at` must be in the future; positive cases send a time tomorrow.
- a matrix's version range must not be empty and its `default_engine` must be among its
  `engines` (supportgate.manifests.schema); positive cases drop a `below` that is not above
  its `min`, and a `default_engine` that names no engine.
- a webhook's `url` must name a public address (supportgate/webhooks/targets.py): positive
  cases send a name under the reserved `.example` domain, which resolves nowhere (a name
  that does not resolve yet is accepted; each delivery checks it again).
- an `as_of` must not be after now (the fleet then is not known): positive cases
  send a time yesterday.
- the manifests of one dry run must not repeat a kind and name: positive cases rename the
  repeats.
- a leaf or tree size of the log must be one the log has: positive cases ask for what the
  fixture's log of one entry (the default matrix) has, leaf 0 and sizes 0 to 1.
Checks that belong to schemathesis's coverage and stateful phases (unsupported_method,
missing_required_header, use_after_free, ensure_resource_availability) see nothing in these
fuzzing cases; OPTIONS and 405 answers are tested in test_options.py.

The document is read from the app itself (`app.openapi_schema`), since serving it needs a key.
One test per operation and database, each with its own app and database, driving
schemathesis's Hypothesis strategies with `@given` (schemathesis's own pytest loader does not
run on pytest 9). Examples are bounded and derandomised: the same ones each run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import CHECKS, CheckFunction, load_all_checks
from schemathesis.python import asgi

from supportgate.app import create_app
from supportgate.config import Settings
from supportgate.manifests.common import version_key
from supportgate.runtime import Runtime

from ..signing import with_test_key

load_all_checks()
ALL_CHECKS: list[CheckFunction] = [c for c in CHECKS.get_all() if not isinstance(c, type)]
MAX_EXAMPLES = 40
HTTP_METHODS = {"get", "put", "post", "delete", "patch"}


def _operations() -> list[tuple[str, str]]:
    """(METHOD, path) of every operation the document lists (the app is built, not started)."""
    document = create_app(Settings(database_url="sqlite://")).openapi_schema.to_schema()
    return sorted(
        (method.upper(), path)
        for path, item in document["paths"].items()
        for method in item
        if method in HTTP_METHODS
    )


OPERATIONS = _operations()


@pytest.fixture
def api_schema(db_url: str) -> Iterator[tuple[Any, dict[str, str]]]:
    """The app on a fresh database as a schemathesis schema, and an admin key's headers."""
    runtime = Runtime.build(with_test_key(replace(Settings.from_env({}), database_url=db_url)))
    runtime.prepare_database(upgrade_schema=True)
    admin = runtime.keys.create(name="schemathesis", role="admin").key
    app = create_app(runtime=runtime)
    loaded = schemathesis.openapi.from_dict(app.openapi_schema.to_schema())
    loaded.app = app
    try:
        yield loaded, {"Authorization": f"Bearer {admin}"}
    finally:
        asgi.shutdown_lifespans()  # the app's lifespan stops the runtime


def _give_what_no_schema_says(case: schemathesis.Case[Any]) -> None:
    """See the module docstring."""
    if isinstance(case.query, dict):
        case.query.pop("cursor", None)
    if case.path == "/v1/waivers" and case.method == "POST" and isinstance(case.body, dict):
        case.body["expires_at"] = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    if case.path.startswith("/v1/matrix") and case.method == "POST" and isinstance(case.body, dict):
        _without_cross_field_conflicts(case.body)
    if case.path == "/v1/webhooks" and case.method == "POST" and isinstance(case.body, dict):
        case.body["url"] = "https://receiver.example/hooks"
    if case.path.startswith("/v1/audit/"):
        _within_the_log(case)
    if case.path == "/v1/evaluations/dry-run" and isinstance(case.body, dict):
        manifests = case.body.get("manifests")
        _without_repeats(manifests if isinstance(manifests, list) else [])
    if isinstance(case.query, dict) and "as_of" in case.query:
        case.query["as_of"] = (datetime.now(UTC) - timedelta(days=1)).isoformat()


def _without_repeats(manifests: list[Any]) -> None:
    seen: set[tuple[Any, Any]] = set()
    for number, manifest in enumerate(manifests):
        metadata = manifest.get("metadata") if isinstance(manifest, dict) else None
        if not isinstance(metadata, dict):
            continue
        if (manifest.get("kind"), metadata.get("name")) in seen:
            metadata["name"] = f"repeat-{number}"
        seen.add((manifest.get("kind"), metadata.get("name")))


def _within_the_log(case: schemathesis.Case[Any]) -> None:
    """Leaves and sizes the fixture's log of one entry has (size 1, leaf 0)."""
    for parameters in (case.path_parameters, case.query):
        if not isinstance(parameters, dict):
            continue
        for name in ("leaf_index", "first"):
            if name in parameters:
                parameters[name] = 0
        for name in ("tree_size", "second"):
            if name in parameters:
                parameters[name] = 1


def _without_cross_field_conflicts(matrix: dict[str, Any]) -> None:
    engines = matrix.get("engines") or {}
    if matrix.get("default_engine") not in engines:
        matrix.pop("default_engine", None)
    for engine in engines.values():
        ranges = [platform.get("toolkit") or {} for platform in engine.get("platforms") or []]
        ranges.append((engine.get("host") or {}).get("python") or {})
        for bounds in ranges:
            low, below = bounds.get("min"), bounds.get("below")
            if low is not None and below is not None and version_key(low) >= version_key(below):
                del bounds["below"]


def test_every_check_schemathesis_has_runs() -> None:
    assert len(ALL_CHECKS) == len(CHECKS.get_all()), "a check class would be left out"
    names = {check.__name__ for check in ALL_CHECKS}
    assert {"positive_data_acceptance", "negative_data_rejection", "ignored_auth"} <= names
    assert len(names) >= 14


def test_the_document_declares_bodies_statuses_and_auth() -> None:
    assert ("POST", "/v1/evaluations") in OPERATIONS
    document = create_app(Settings(database_url="sqlite://")).openapi_schema.to_schema()
    evaluate = document["paths"]["/v1/evaluations"]["post"]
    body = evaluate["requestBody"]
    assert body["required"] is True
    assert set(body["content"]) == {"application/json", "application/yaml"}
    kinds = [
        option["properties"]["kind"]["enum"]
        for option in body["content"]["application/json"]["schema"]["oneOf"]
    ]
    assert kinds == [["HardwareManifest"], ["DeploymentManifest"]]
    assert "$ref" not in json.dumps(body), "the manifest schemas are inlined"
    created = evaluate["responses"]["201"]["content"]["application/json"]["schema"]
    assert created == {"$ref": "#/components/schemas/Decision"}
    assert {"400", "401", "403", "409", "413", "415", "503"} <= set(evaluate["responses"])

    untrack = document["paths"]["/v1/manifests/{kind}/{name}"]["delete"]
    assert "204" in untrack["responses"]
    assert "content" not in untrack["responses"]["204"]
    assert "200" not in untrack["responses"]
    assert {"401", "403", "404"} <= set(untrack["responses"])

    for path, item in document["paths"].items():
        for method, operation in item.items():
            public = path in {"/health/live", "/health/ready", "/metrics"}
            assert ("security" not in operation) is public, (method, path)


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_no_server_errors_and_answers_as_documented(
    api_schema: tuple[Any, dict[str, str]], method: str, path: str
) -> None:
    loaded, admin = api_schema
    operation = loaded[path][method]
    cases = st.one_of(
        operation.as_strategy(generation_mode=schemathesis.GenerationMode.POSITIVE),
        operation.as_strategy(generation_mode=schemathesis.GenerationMode.NEGATIVE),
    )

    @given(case=cases)
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def answers_as_documented(case: schemathesis.Case[Any]) -> None:
        if case.meta is not None and case.meta.generation.mode.is_positive:
            _give_what_no_schema_says(case)
        case.call_and_validate(headers=admin, checks=ALL_CHECKS)

    answers_as_documented()
