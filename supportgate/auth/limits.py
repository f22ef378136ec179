"""Rate limits on who knocks: failed authentications per client address, bursts per key, in
two token buckets of this process's memory (per replica). What each refuses, and why our own
bucket rather than the `limits` library: docs/rate-limits.md."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict

from supportgate.clock import Clock
from supportgate.config import RateLimits

from .services import KeyService

MAX_BUCKETS = 100_000
"""Buckets kept per kind; past it the least recently used one is forgotten (it has most
likely refilled, and forgetting a bucket only ever gives its owner a full one)."""


class TokenBuckets:
    """A token bucket per name: at most `burst` tokens, `per_second` come back each second."""

    def __init__(self, *, burst: int, per_second: float, clock: Clock) -> None:
        self._burst = float(burst)
        self._per_second = per_second
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, at
        self._lock = threading.Lock()

    def take(self, name: str) -> float:
        """0.0 when there was a token, else the seconds until there is one."""
        with self._lock:
            now = self._clock.monotonic()
            tokens = self._tokens(name, now)
            if tokens >= 1.0:
                self._store(name, tokens - 1.0, now)
                return 0.0
            self._store(name, tokens, now)
            return (1.0 - tokens) / self._per_second

    def wait(self, name: str) -> float:
        """The seconds until `name` has a token (0.0: it has one now), taking none."""
        with self._lock:
            if name not in self._buckets:
                return 0.0
            tokens = self._tokens(name, self._clock.monotonic())
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self._per_second

    def _tokens(self, name: str, now: float) -> float:
        stored = self._buckets.get(name)
        if stored is None:
            return self._burst
        tokens, at = stored
        return min(self._burst, tokens + (now - at) * self._per_second)

    def _store(self, name: str, tokens: float, now: float) -> None:
        self._buckets[name] = (tokens, now)
        self._buckets.move_to_end(name)
        if len(self._buckets) > MAX_BUCKETS:
            self._buckets.popitem(last=False)


class RequestLimits:
    def __init__(self, settings: RateLimits | None, *, clock: Clock) -> None:
        self._failures: TokenBuckets | None = None
        self._bursts: TokenBuckets | None = None
        self.refusal_delay = 0.0
        if settings:  # None: limits off
            self._failures = TokenBuckets(
                burst=settings.auth_failures_burst,
                per_second=settings.auth_failures_per_second,
                clock=clock,
            )
            self._bursts = TokenBuckets(
                burst=settings.key_burst, per_second=settings.key_per_second, clock=clock
            )
            self.refusal_delay = settings.auth_refusal_delay

    def before_lookup(self, client: str, secret: str, keys: KeyService) -> int | None:
        """Seconds to answer in Retry-After when `client` has used up its failed
        authentications and `secret` is none of the keys `keys` holds; None: look it up."""
        if self._failures is None:
            return None
        wait = self._failures.wait(client)
        if wait <= 0.0 or keys.holds(secret):
            return None
        return _retry_after(wait)

    def failed(self, client: str) -> None:
        """A key from `client` is no key (or no longer one): one token from its failures."""
        if self._failures is not None:
            self._failures.take(client)

    def admitted(self, key_name: str) -> int | None:
        """A key authenticated: one token from its burst. Seconds to answer in Retry-After
        when the key has spent its burst; None: serve it."""
        if self._bursts is None:
            return None
        wait = self._bursts.take(key_name)
        return _retry_after(wait) if wait > 0.0 else None


def _retry_after(wait: float) -> int:
    return max(1, math.ceil(wait))
