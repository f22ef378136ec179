"""The one guard every route passes: `Authorization: Bearer <key>`, then the route's role.

Routes declare what they need in `opt`: `opt={"role": "procurement"}` (default `ci`), or
`opt={"public": True}` for health and metrics. Litestar's own routes (the OpenAPI document
under /schema) declare nothing, so they need `ci`: nothing but health and metrics is open.
No or an unknown key is 401; a key whose role is too small is 403.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler

from .roles import Principal, Role, role_allows
from .services import KeyService

PRINCIPAL_STATE_KEY = "supportgate_principal"
DEFAULT_ROLE: Role = "ci"


async def require_key(
    connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
) -> None:
    if handler.opt.get("public"):
        return
    needed: Role = handler.opt.get("role", DEFAULT_ROLE)
    secret = _bearer(connection.headers.get("authorization"))
    if secret is None:
        raise NotAuthorizedException("send an API key as `Authorization: Bearer <key>`")
    keys: KeyService = connection.app.state.runtime.keys
    principal = keys.cached(secret) or await anyio.to_thread.run_sync(keys.authenticate, secret)
    if principal is None:
        raise NotAuthorizedException("unknown API key")
    connection.state[PRINCIPAL_STATE_KEY] = principal
    if not role_allows(principal.role, needed):
        raise PermissionDeniedException(
            f"this needs the {needed} role; key {principal.name!r} has {principal.role}"
        )


def principal_of(connection: ASGIConnection[Any, Any, Any, Any]) -> Principal:
    principal = connection.state.get(PRINCIPAL_STATE_KEY)
    if not isinstance(principal, Principal):
        raise NotAuthorizedException("no API key")
    return principal


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    value = value.strip()
    return value if scheme.lower() == "bearer" and value else None
