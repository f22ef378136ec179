"""How route handlers get the service's parts: one way, everywhere.

The choice: ONE registry. supportgate.runtime.Runtime builds every part once (database,
engine, the ledger's writer, each domain's service) and its fields are the registry;
`provide_parts(runtime)` makes each field a Litestar dependency of the same name, and a
handler asks for a part by naming it with its type:

    async def one(self, tracking: Part[TrackingService], kind: ..., name: ...) -> ...

So a controller imports only the service classes it uses (from its own domain), never the
Runtime, and the import graph stays a tree: runtime -> domains, not domains -> runtime.
Nothing builds a service per request, and no handler reaches into another's parts. Guards,
which Litestar does not inject, read the same Runtime from `app.state.runtime`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar

from litestar.di import NamedDependency, Provide

T = TypeVar("T")

Part: TypeAlias = NamedDependency[T]
"""`name: Part[Type]` in a handler's signature: the Runtime's field `name` (a Type)."""


def provide_parts(runtime: Any) -> dict[str, Provide]:
    """A dependency per field of the Runtime (a dataclass instance), under the field's name."""
    return {
        field.name: Provide(_constant(getattr(runtime, field.name)), sync_to_thread=False)
        for field in dataclasses.fields(runtime)
    }


def _constant(value: T) -> Callable[[], T]:
    def provide() -> T:
        return value

    return provide
