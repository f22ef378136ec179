"""Waiting for something a test started elsewhere (a sweep, a delivery, a scheduler's run)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
LIMIT_S = 60.0
POLL_S = 0.05


def wait_until(condition: Callable[[], T | None], what: str, limit: float = LIMIT_S) -> T:
    """Poll until `condition()` is truthy and return that value; fail naming `what` after
    `limit` s. The limit is a safety net for a hung test, never a timing expectation: a probe
    that means "not yet" returns None (or another falsy value, which counts as "not yet" too)."""
    deadline = time.monotonic() + limit
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting after {limit:g} s for {what}")
        time.sleep(POLL_S)
