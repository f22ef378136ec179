"""schemathesis over every operation of the OpenAPI document, in-process (ASGI), with an admin
key, on SQLite and PostgreSQL: requests that fit the schema and requests that do not; no
answer may be a 5xx, and every answer must be one the document declares (status, media type,
body).

The document is read from the app itself (`app.openapi_schema`), since serving it needs a key.
One test per operation and database, each with its own app and database, driving
schemathesis's Hypothesis strategies with `@given` (schemathesis's own pytest loader does not
run on pytest 9). Examples are bounded and derandomised: the same ones each run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import CheckFunction, not_a_server_error
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from supportgate.app import create_app
from supportgate.config import Settings
from supportgate.runtime import Runtime

CHECKS: list[CheckFunction] = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    ignored_auth,
    unsupported_method,
]
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
    runtime = Runtime.build(replace(Settings.from_env({}), database_url=db_url))
    runtime.prepare_database(upgrade_schema=True)
    admin = runtime.keys.create_key(name="schemathesis", role="admin")
    app = create_app(runtime=runtime)
    loaded = schemathesis.openapi.from_dict(app.openapi_schema.to_schema())
    loaded.app = app
    try:
        yield loaded, {"Authorization": f"Bearer {admin}"}
    finally:
        asgi.shutdown_lifespans()  # the app's lifespan stops the runtime


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
        case.call_and_validate(headers=admin, checks=CHECKS)

    answers_as_documented()
