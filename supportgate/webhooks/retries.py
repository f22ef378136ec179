"""When to try again, when to give up, when to disable: the delivery policy, and a claim that
outlasts an attempt's deadline (docs/webhooks.md: Delivery, Claims and crashes)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

HTTP_GONE = 410
_rng = random.Random()  # noqa: S311 - jitter, not secrets


@dataclass(frozen=True, slots=True)
class DeliveryPolicy:
    poll_interval: float = 0.5
    request_timeout: float = 15.0
    attempt_deadline: float = 30.0
    lease_seconds: float = 60.0
    concurrency: int = 4
    base_delay: float = 5.0
    max_delay: float = 12 * 3600.0
    max_attempts: int = 18  # with the delays above: about a day and a half, on average
    disable_after_failures: int = 10
    disable_after_seconds: float = 24 * 3600.0

    def __post_init__(self) -> None:
        if not self.request_timeout <= self.attempt_deadline < self.lease_seconds:
            raise ValueError("need request_timeout <= attempt_deadline < lease_seconds")
        if self.concurrency < 1 or self.max_attempts < 1 or self.disable_after_failures < 1:
            raise ValueError("concurrency, max_attempts, disable_after_failures must be >= 1")

    def retry_delay(
        self,
        attempt: int,
        retry_after: float | None = None,
        uniform: Callable[[float, float], float] = _rng.uniform,
    ) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** min(attempt - 1, 62))
        delay = uniform(0.0, ceiling)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_delay))
        return delay


def succeeded(status_code: int | None) -> bool:
    return status_code is not None and 200 <= status_code < 300  # noqa: PLR2004


def retry_after_seconds(header: str | None) -> float | None:
    """A `Retry-After` given in seconds (an HTTP date is ignored: the backoff applies)."""
    if header is None or not header.strip().isdigit():
        return None
    return float(header.strip())
