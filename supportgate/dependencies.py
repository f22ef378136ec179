"""How handlers get the services they name (`tracking: Part[TrackingService]`): each domain's
`routes(...)` provides (`served`) what supportgate.app gives it (docs/development.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias, TypeVar

from litestar import Router
from litestar.di import NamedDependency, Provide
from litestar.types import ControllerRouterHandler

T = TypeVar("T")

Part: TypeAlias = NamedDependency[T]
"""`name: Part[Type]` in a handler's signature: the service its router provides as `name`."""


def served(*handlers: ControllerRouterHandler, **services: object) -> Router:
    return Router("/", route_handlers=list(handlers), dependencies=provide(**services))


def provide(**services: object) -> dict[str, Provide]:
    return {
        name: Provide(_constant(service), use_cache=True, sync_to_thread=False)
        for name, service in services.items()
    }


def _constant(value: T) -> Callable[[], T]:
    def provide() -> T:
        return value

    return provide
