"""The one guard every route passes: `Authorization: Bearer <key>`, then the route's role
(`opt={"role": ...}`, default `ci`, which Litestar's own /schema routes need; health and
metrics are `public`; `OPTIONS` none: docs/schemas-and-api.md). The console (/ui) has a guard of
its own, on its session cookie; this one lets its mount through, so the /v1 API never accepts the
cookie."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from anyio import sleep
from litestar.connection import ASGIConnection
from litestar.enums import HttpMethod
from litestar.exceptions import (
    NotAuthorizedException,
    PermissionDeniedException,
    TooManyRequestsException,
)
from litestar.handlers import HTTPRouteHandler
from litestar.handlers.base import BaseRouteHandler

from .limits import RequestLimits
from .roles import Principal, Role, role_allows
from .services import KeyService

PRINCIPAL_STATE_KEY = "supportgate_principal"
DEFAULT_ROLE: Role = "ci"


@dataclass(eq=False)  # a service: equal only to itself
class KeyGuard:
    """The console's login form asks it too (`authenticate`)."""

    keys: KeyService
    limits: RequestLimits

    async def __call__(
        self, connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
    ) -> None:
        if handler.opt.get("public") or handler.opt.get("console") or _only_options(handler):
            return
        secret = _bearer(connection.headers.get("authorization"))
        if secret is None:
            raise NotAuthorizedException("send an API key as `Authorization: Bearer <key>`")
        principal = await self.authenticate(connection, secret)
        if principal is None:
            raise NotAuthorizedException("unknown API key")
        act_as(connection, principal, handler.opt.get("role", DEFAULT_ROLE))

    async def authenticate(
        self, connection: ASGIConnection[Any, Any, Any, Any], secret: str
    ) -> Principal | None:
        """From memory, or (when memory is over a second old) after a read in a thread. 429
        before the lookup when the client's address has used up its failed authentications
        and the key is none of those in memory, and after it when the key's burst is spent."""
        limits, keys = self.limits, self.keys
        client = connection.client.host if connection.client else ""
        refused = limits.before_lookup(client, secret, keys)
        if refused is not None:
            await sleep(limits.refusal_delay)  # a flood waiting for answers waits too
            _refuse_after(refused, "too many unknown API keys from this address")
        if keys.fresh():
            principal = keys.authenticate(secret, may_read=False)
        else:
            principal = await keys.authenticate_in_thread(secret)
        if principal is None:
            limits.failed(client)
            return None
        _refuse_after(
            limits.admitted(principal.name), f"too many requests for key {principal.name!r}"
        )
        return principal


def _refuse_after(seconds: int | None, detail: str) -> None:
    if seconds is not None:
        raise TooManyRequestsException(
            f"{detail}; retry after {seconds} s", headers={"Retry-After": str(seconds)}
        )


def act_as(
    connection: ASGIConnection[Any, Any, Any, Any], principal: Principal, needed: Role
) -> None:
    _request_state(connection)[PRINCIPAL_STATE_KEY] = principal
    if not role_allows(principal.role, needed):
        raise PermissionDeniedException(
            f"this needs the {needed} role; key {principal.name!r} has {principal.role}"
        )


def principal_of(connection: ASGIConnection[Any, Any, Any, Any]) -> Principal:
    principal = _request_state(connection).get(PRINCIPAL_STATE_KEY)
    if not isinstance(principal, Principal):
        raise NotAuthorizedException("no API key")
    return principal


def _request_state(connection: ASGIConnection[Any, Any, Any, Any]) -> dict[str, Any]:
    """The request's state as the plain dict in its scope (what `connection.state` wraps in
    a new State object, with a lock, at every access)."""
    state: dict[str, Any] = connection.scope.setdefault("state", {})
    return state


def _only_options(handler: BaseRouteHandler) -> bool:
    return isinstance(handler, HTTPRouteHandler) and handler.http_methods == {HttpMethod.OPTIONS}


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    value = value.strip()
    return value if scheme.lower() == "bearer" and value else None
