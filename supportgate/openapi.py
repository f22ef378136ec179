"""What the OpenAPI document says that Litestar cannot infer: raw request bodies (schemas/,
`$defs` inlined), security, the error responses every route may give (a handler's own
`responses=` win) and request rules the types do not carry. Descriptions say only what no
schema can (a waiver's future `expires_at`, a cursor the endpoint gave out).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

import msgspec
from litestar import Litestar
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import (
    Components,
    OpenAPI,
    OpenAPIMediaType,
    OpenAPIResponse,
    Operation,
    RequestBody,
    Schema,
    SecurityScheme,
)
from litestar.openapi.spec.enums import OpenAPIType
from litestar.routes import HTTPRoute

from supportgate.manifests import DeploymentManifest, HardwareManifest, Matrix
from supportgate.manifests.common import RFC3339_RE
from supportgate.manifests.schema import render

SECURITY_SCHEME: Final = "apiKey"
BUNDLE_SECURITY_SCHEME: Final = "bundleToken"
NOT_NUL: Final = r"^[^\u0000]*$"
HTTP_METHODS: Final = ("get", "put", "post", "delete", "patch")
BODY_MEDIA_TYPES: Final = ("application/json", "application/yaml")

HTTP_400: Final = 400
ERROR_DESCRIPTIONS: Final[dict[int, str]] = {
    400: "Bad input: `field` names it (a JSON path into the body, or a parameter); nothing written",
    401: "No API key, or an unknown one (`Authorization: Bearer <key>`)",
    403: "The API key's role is too small for this route, or the key does not act for the "
    "manifest's owner (`field`: `$.metadata.owner`)",
    404: "Nothing of that name is known",
    409: "Contradicts what is stored",
    413: "The body is over 1 MiB",
    415: "The Content-Type is neither JSON nor YAML",
    503: "The database or the policy engine cannot answer: nothing was decided or recorded",
}


class FieldProblem(msgspec.Struct, kw_only=True):
    """One problem of a document that does not decode or validate (CONTRACT 10.8)."""

    field: str
    message: str
    line: int | None
    """1-based; null where the text does not show it."""
    column: int | None


class ErrorBody(msgspec.Struct, kw_only=True):
    """The body of every 4xx and 5xx answer (supportgate.http_errors, and Litestar's own)."""

    status_code: int
    detail: str
    field: str | None = None
    errors: list[FieldProblem] | None = None
    """A document's problems, all of them (at most 50), the first being `field`'s."""
    extra: Any = None


class BadInputBody(ErrorBody, kw_only=True):
    """The body of a 400: it always names the input at fault (tests/http/test_schemathesis.py
    holds every 400 of every operation to this)."""

    field: str


def error(status: int, description: str | None = None) -> ResponseSpec:
    return ResponseSpec(
        data_container=BadInputBody if status == HTTP_400 else ErrorBody,
        description=description or ERROR_DESCRIPTIONS[status],
        generate_examples=False,
    )


def body(data_container: Any, description: str) -> ResponseSpec:
    """A success response whose body Litestar cannot infer (a handler that returns bytes)."""
    return ResponseSpec(
        data_container=data_container, description=description, generate_examples=False
    )


def csv_operation(columns: Iterable[str]) -> type[Operation]:
    """An operation whose 200 answer is its JSON body, or CSV text with `format=csv`."""
    header = ",".join(columns)

    @dataclass(eq=False)  # a dataclass, so that its __init__ calls __post_init__
    class CsvOperation(Operation):
        def __post_init__(self) -> None:
            ok = (self.responses or {}).get("200")
            if isinstance(ok, OpenAPIResponse) and ok.content is not None:
                ok.content["text/csv"] = OpenAPIMediaType(
                    schema=Schema(type=OpenAPIType.STRING, description=f"columns: {header}")
                )

    return CsvOperation


def components() -> Components:
    bearers = {
        SECURITY_SCHEME: "An API key made by `supportgate keys create`",
        BUNDLE_SECURITY_SCHEME: "SUPPORTGATE_BUNDLE_TOKEN: OPA's credential for the bundle",
    }
    return Components(
        security_schemes={
            name: SecurityScheme(type="http", scheme="bearer", description=description)
            for name, description in bearers.items()
        }
    )


@dataclass(eq=False)  # keeps Schema's __hash__
class RawSchema(Schema):
    document: dict[str, Any] | None = None

    def to_schema(self) -> dict[str, Any]:
        return dict(self.document or {})


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """`node` with every `{"$ref": "#/$defs/X"}` replaced by X (the manifests do not recurse)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in seen:
                raise ValueError(f"the schema of {name} refers to itself: cannot inline it")
            rest = {key: value for key, value in node.items() if key != "$ref"}
            return _inline({**defs[name], **rest}, defs, (*seen, name))
        return {key: _inline(value, defs, seen) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    return node


@cache
def inlined_schema(target: Any) -> dict[str, Any]:
    document = json.loads(render(target))
    defs = document.pop("$defs", {})
    document.pop("$schema", None)
    return dict(_inline(document, defs))


def _request_body(schema: dict[str, Any], description: str) -> RequestBody:
    return RequestBody(
        content={
            media_type: OpenAPIMediaType(schema=RawSchema(document=schema))
            for media_type in BODY_MEDIA_TYPES
        },
        description=description,
        required=True,
    )


@dataclass(eq=False)  # a dataclass, so that its __init__ calls __post_init__
class RawBody(Operation):
    """An operation whose handler reads the body itself; subclasses say what it holds."""

    def body(self) -> RequestBody:
        raise NotImplementedError

    def __post_init__(self) -> None:
        if self.request_body is None:
            self.request_body = self.body()


_SIZES: Final = {"minItems": 1, "maxItems": 100}  # supportgate.evaluations.dry_run.MAX_MANIFESTS


class ManifestBody(RawBody):
    def body(self) -> RequestBody:
        schema = {"oneOf": [inlined_schema(HardwareManifest), inlined_schema(DeploymentManifest)]}
        return _request_body(schema, "One manifest (docs/manifests.md), as JSON or YAML")


class ManifestsBody(RawBody):
    def body(self) -> RequestBody:
        one = [inlined_schema(HardwareManifest), inlined_schema(DeploymentManifest)]
        several = {
            "type": "object",
            "properties": {"manifests": {"type": "array", "items": {"oneOf": one}, **_SIZES}},
            "required": ["manifests"],
            "additionalProperties": False,
        }
        return _request_body(
            {"oneOf": [*one, several]},
            'One manifest (docs/manifests.md), `{"manifests": [...]}`, or as YAML also a'
            " stream of manifests (`---` between them)",
        )


class MatrixBody(RawBody):
    def body(self) -> RequestBody:
        return _request_body(
            inlined_schema(Matrix), "A support matrix (docs/manifests.md), as JSON or YAML"
        )


@dataclass(eq=False)  # a dataclass, so that its __init__ calls __post_init__
class OverlappingAnswers(Operation):
    """The 200 body is one of several shapes, one a superset of another (a page with more
    fields): `anyOf`, where Litestar's `oneOf` of a union demands that exactly one match."""

    def __post_init__(self) -> None:
        ok = (self.responses or {}).get("200")
        if isinstance(ok, OpenAPIResponse) and ok.content is not None:
            for media in ok.content.values():
                schema = media.schema
                if isinstance(schema, Schema) and schema.one_of:
                    schema.any_of, schema.one_of = schema.one_of, None


def document(app: Litestar) -> None:
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            if not handler.resolve_include_in_schema() or handler.opt.get("public"):
                continue
            statuses = [400, 401, 403, 503]
            if route.path_parameters:
                statuses.append(404)
            if issubclass(handler.operation_class, RawBody):
                statuses += [413, 415]
            declared = dict(handler.responses or {})
            handler.responses = {
                **{status: error(status) for status in sorted(statuses)},
                **declared,
            }
            handler.security = [{SECURITY_SCHEME: []}]


def operations(openapi: OpenAPI) -> dict[tuple[str, str], Operation]:
    found: dict[tuple[str, str], Operation] = {}
    for path, item in (openapi.paths or {}).items():
        for method in HTTP_METHODS:
            operation = getattr(item, method, None)
            if operation is not None:
                found[method.upper(), path] = operation
    return found


def _free_strings(schema: Any) -> list[Schema]:
    """A parameter's string schemas (maybe `oneOf` with null) without a pattern, enum or format."""
    if not isinstance(schema, Schema) or schema.pattern or schema.enum or schema.format:
        return []
    if schema.type == OpenAPIType.STRING:
        return [schema]
    return [found for part in (schema.one_of or []) for found in _free_strings(part)]


def _structs(base: type[msgspec.Struct] = msgspec.Struct) -> dict[str, type[msgspec.Struct]]:
    found: dict[str, type[msgspec.Struct]] = {}
    for struct in base.__subclasses__():
        found[struct.__name__] = struct
        found.update(_structs(struct))
    return found


def _body_components(openapi: OpenAPI) -> set[str]:
    names: set[str] = set()
    for operation in operations(openapi).values():
        body = operation.request_body
        for media in (body.content or {}).values() if isinstance(body, RequestBody) else ():
            ref = getattr(media.schema, "ref", None)
            if isinstance(ref, str):
                names.add(ref.rsplit("/", 1)[-1])
    return names


def declare_request_rules(
    app: Litestar, *, waivable_rules: frozenset[str], key_owner_pattern: str, webhook_url: str
) -> None:
    """The patterns of a key's owner and a webhook's URL, given: their domains import this."""
    openapi = app.openapi_schema  # generated here, once; later reads return this object
    for operation in operations(openapi).values():
        for parameter in operation.parameters or []:
            for schema in _free_strings(getattr(parameter, "schema", None)):
                schema.pattern = NOT_NUL
    components = openapi.components.schemas or {}
    structs = _structs()
    for name in _body_components(openapi):  # Litestar leaves forbid_unknown_fields unsaid
        struct = structs.get(name)
        if struct is not None and struct.__struct_config__.forbid_unknown_fields:
            components[name].additional_properties = False
    waiver = components["WaiverRequest"].properties or {}
    rule, expires_at = waiver["rule"], waiver["expires_at"]
    if not (isinstance(rule, Schema) and isinstance(expires_at, Schema)):
        raise TypeError("Litestar wrote no Schema for WaiverRequest.rule or .expires_at")
    rule.enum = sorted(waivable_rules)
    expires_at.pattern = RFC3339_RE  # msgspec's reading of a time; Meta takes no pattern there
    url = (components["WebhookCreate"].properties or {})["url"]
    if not isinstance(url, Schema):
        raise TypeError("Litestar wrote no Schema for WebhookCreate.url")
    url.pattern = webhook_url  # check_url holds the body to it, saying what is wrong in words
    owners = (components["KeyRequest"].properties or {})["owners"]
    if not (isinstance(owners, Schema) and isinstance(owners.items, Schema)):
        raise TypeError("Litestar wrote no Schema for KeyRequest.owners' items")
    owners.items.pattern = key_owner_pattern  # Litestar leaves a list item's Meta out
    # owners belong to ci and procurement keys: an admin key's owners, if any, are none
    components["KeyRequest"].any_of = [
        Schema(properties={"role": Schema(enum=["ci", "procurement"])}),
        Schema(properties={"owners": Schema(type=OpenAPIType.ARRAY, max_items=0)}),
    ]
