"""The one way a blocking call leaves the event loop, written beside the call: `@in_thread` on
a method only async code calls; `page_in_thread = thread_twin(page)` under one that others also
call as it is (docs/development.md; tests/app/test_wiring.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import anyio.to_thread

P = ParamSpec("P")
S = TypeVar("S")
T = TypeVar("T")


def in_thread(blocking: Callable[P, T]) -> Callable[P, Coroutine[Any, Any, T]]:
    @functools.wraps(blocking)
    async def hop(*args: P.args, **kwargs: P.kwargs) -> T:
        return await anyio.to_thread.run_sync(functools.partial(blocking, *args, **kwargs))

    return hop


def thread_twin(
    method: Callable[Concatenate[S, P], T],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
    """The method of that name, awaited in a worker thread; looked up on the instance at each
    call, so an override (or a test's stand-in) is what runs."""
    name = method.__name__

    async def hop(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        blocking = functools.partial(getattr(self, name), *args, **kwargs)
        return cast(T, await anyio.to_thread.run_sync(blocking))

    return hop
