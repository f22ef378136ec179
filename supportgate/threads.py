"""The one way a blocking call leaves the event loop: `in_thread`, written beside the call.

A service keeps its blocking method (the CLI, tests and other services call it as it is) and
declares its awaitable twin once, under it:

    def page(self, ...) -> Page: ...
    page_in_thread = in_thread(page)

so a handler awaits `service.page_in_thread(...)` and never writes a thread hop of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

import anyio.to_thread

P = ParamSpec("P")
T = TypeVar("T")


def in_thread(blocking: Callable[P, T]) -> Callable[P, Coroutine[Any, Any, T]]:
    """`blocking`, awaited: it runs in a worker thread while the event loop serves others."""

    @functools.wraps(blocking)
    async def hop(*args: P.args, **kwargs: P.kwargs) -> T:
        return await anyio.to_thread.run_sync(functools.partial(blocking, *args, **kwargs))

    return hop
