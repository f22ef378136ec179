"""Checks every request passes before its handler runs (the `before_request` hook), each a 400
naming the field (docs/schemas-and-api.md): no NUL in a parameter (PostgreSQL's refusal would be
a 503), no query parameter the endpoint does not take or given twice, and a JSON body decoded
here, once, under the manifests' rules: Litestar's own decoder keeps the last of two equal keys
and answers a 5,000-digit integer or a malformed document with a 400 naming no field."""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Request
from litestar.enums import RequestEncodingType
from litestar.openapi.spec import Parameter
from litestar.utils.scope.state import ScopeState

from supportgate.errors import UsageError
from supportgate.manifests.decode import decode_json
from supportgate.openapi import operations

_QUERY_NAMES_KEY = "supportgate_query_names"


async def check_parameters(request: Request[Any, Any, Any]) -> None:
    """The API's hook; the parameter checks only where there are any (most POSTs have none)."""
    if request.scope.get("query_string") or request.scope.get("path_params"):
        await refuse_nul_characters(request)
        refuse_unknown_query_parameters(request)
    await check_json_body(request)


async def refuse_nul_characters(request: Request[Any, Any, Any]) -> None:
    """Also the console's hook (supportgate.console.app)."""
    parameters = [*request.path_params.items(), *request.query_params.multi_items()]
    for name, value in parameters:
        if isinstance(value, str) and "\x00" in value:
            raise UsageError("NUL characters (%00) are not accepted", field=name)


async def check_json_body(request: Request[Any, Any, Any]) -> None:
    """Litestar's `data` is the request's JSON as cached in the scope (`Request.json`), which
    its signature model passes through when it already is an instance of the type: so the
    body is decoded once, here, not again by Litestar."""
    data = request.route_handler.parsed_data_field
    if data is None:
        return
    body = data.kwarg_definition
    if body is None or getattr(body, "media_type", None) == RequestEncodingType.JSON:
        decoded = decode_json(await request.body(), data.annotation)
        ScopeState.from_scope(request.scope).json = decoded


def refuse_unknown_query_parameters(request: Request[Any, Any, Any]) -> None:
    known = _query_names(request.app).get((request.method, request.scope.get("path_template")))
    if known is None:  # not in the OpenAPI document: Litestar's OPTIONS and /schema routes
        return
    for name in request.query_params:
        if name not in known:
            takes = ", ".join(sorted(known)) or "none"
            raise UsageError(
                f"not a query parameter of this endpoint (it takes {takes})", field=name
            )
        if len(request.query_params.getall(name)) > 1:
            raise UsageError("given more than once; it takes one value", field=name)


def _query_names(app: Litestar) -> dict[tuple[str, str | None], frozenset[str]]:
    """Read once from the OpenAPI document (no query parameter takes a list of values)."""
    names: dict[tuple[str, str | None], frozenset[str]] | None = app.state.get(_QUERY_NAMES_KEY)
    if names is None:
        names = {
            key: frozenset(
                p.name
                for p in operation.parameters or []
                if isinstance(p, Parameter) and p.param_in == "query"
            )
            for key, operation in operations(app.openapi_schema).items()
        }
        app.state[_QUERY_NAMES_KEY] = names
    return names
