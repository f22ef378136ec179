"""Settings, read once from the environment by whoever starts the program (never at import).
Each variable is documented in docs/configuration.md."""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from supportgate.errors import UsageError
from supportgate.package_data import POLICIES_PACKAGE, package_directory
from supportgate.pagination import check_choice

DEFAULT_POLICY_DIR = package_directory(POLICIES_PACKAGE)
DEFAULT_DATABASE_URL = "sqlite:///supportgate.db"
DEFAULT_REEVALUATE_CRON = "0 3 * * *"
DEFAULT_OPA_TIMEOUT_SECONDS = 5.0
"""The deadline of each call to OPA; a sweep's batch of 1000 manifests takes well under 1 s."""
CHECKPOINT_INTERVAL_SECONDS = 5.0
"""The contract's longest wait between an entry and the checkpoint that signs it."""
DEFAULT_MATRIX_POLL_SECONDS = 300.0
DEFAULT_MATRIX_FETCH_TIMEOUT = 30.0
CONSOLE_IDLE_TIMEOUT = 30 * 60.0
CONSOLE_SESSION_TIMEOUT = 8 * 3600.0  # after its login, however busy: a working day


@dataclass(frozen=True, slots=True)
class RateLimits:
    """The edge's token buckets, per replica (docs/rate-limits.md). The defaults are far above
    what a CI fleet or the benchmarks send: they stop floods and runaway loops, not ordinary use."""

    auth_failures_burst: int = 100
    auth_failures_per_second: float = 1.0
    auth_refusal_delay: float = 1.0  # seconds a 429 for unknown keys is held: docs/rate-limits.md
    key_burst: int = 2000
    key_per_second: float = 1000.0


@dataclass(frozen=True, slots=True)
class ServerLimits:
    header_timeout: float = 10.0
    keep_alive_timeout: int = 5
    max_connections: int = 1000


@dataclass(frozen=True, slots=True)
class DatabaseTimeouts:
    """PostgreSQL's `statement_timeout` and `lock_timeout` in seconds (0: none), so that a
    request whose table is locked, or whose query runs away, fails with a 503 in seconds
    (docs/configuration.md). Migrations run without them (an index build may take longer)."""

    statement: float = 30.0
    lock: float = 5.0


def default_log_origin() -> str:
    """`supportgate/<hostname>`: the origin line of the checkpoints and the signing key's name."""
    # platform is loaded already (by uuid); socket would add a tenth of `check`'s start-up.
    return f"supportgate/{platform.node()}"


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    opa_url: str | None = None
    opa_token: str | None = None
    opa_timeout: float = DEFAULT_OPA_TIMEOUT_SECONDS
    bundle_signing_key_file: Path | None = None
    bundle_token: str | None = None
    reevaluate_cron: str = DEFAULT_REEVALUATE_CRON
    policy_dir: Path = DEFAULT_POLICY_DIR
    policy_bundles: tuple[Path, ...] = ()
    signing_key_file: Path | None = None
    log_origin: str = field(default_factory=default_log_origin)
    checkpoint_witness: Path | None = None
    verifier_key: str | None = None
    checkpoint_interval: float = CHECKPOINT_INTERVAL_SECONDS
    rate_limits: RateLimits | None = field(default_factory=RateLimits)  # None: limits off
    console_idle_timeout: float = CONSOLE_IDLE_TIMEOUT
    console_session_timeout: float = CONSOLE_SESSION_TIMEOUT
    database_timeouts: DatabaseTimeouts = DatabaseTimeouts()
    server_limits: ServerLimits = ServerLimits()
    webhook_allow: tuple[str, ...] = ()
    matrix_source: str | None = None
    matrix_poll: float = DEFAULT_MATRIX_POLL_SECONDS
    matrix_fetch_timeout: float = DEFAULT_MATRIX_FETCH_TIMEOUT
    matrix_cache_dir: Path | None = None
    matrix_ca_file: Path | None = None
    evaluation_process: bool = True  # the embedded engine's evaluations in a child process

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(
            database_url=env.get("SUPPORTGATE_DATABASE_URL") or DEFAULT_DATABASE_URL,
            opa_url=env.get("SUPPORTGATE_OPA_URL") or None,
            opa_token=env.get("SUPPORTGATE_OPA_TOKEN") or None,
            opa_timeout=_number(
                env,
                "SUPPORTGATE_OPA_TIMEOUT",
                DEFAULT_OPA_TIMEOUT_SECONDS,
                what="seconds each call to OPA may take",
                at_most=MAX_OPA_TIMEOUT_SECONDS,
            ),
            bundle_signing_key_file=_path(env.get("SUPPORTGATE_BUNDLE_SIGNING_KEY_FILE")),
            bundle_token=env.get("SUPPORTGATE_BUNDLE_TOKEN") or None,
            reevaluate_cron=env.get("SUPPORTGATE_REEVALUATE_CRON") or DEFAULT_REEVALUATE_CRON,
            policy_dir=Path(env.get("SUPPORTGATE_POLICY_DIR") or DEFAULT_POLICY_DIR),
            policy_bundles=tuple(
                Path(part) for part in env.get("SUPPORTGATE_POLICY_BUNDLES", "").split(":") if part
            ),
            signing_key_file=_path(env.get("SUPPORTGATE_SIGNING_KEY_FILE")),
            log_origin=env.get("SUPPORTGATE_LOG_ORIGIN") or default_log_origin(),
            checkpoint_witness=_path(env.get("SUPPORTGATE_CHECKPOINT_WITNESS")),
            verifier_key=env.get("SUPPORTGATE_VERIFIER_KEY") or None,
            checkpoint_interval=_number(
                env,
                "SUPPORTGATE_CHECKPOINT_INTERVAL",
                CHECKPOINT_INTERVAL_SECONDS,
                what="seconds between checkpoints (entries are signed within 5 s)",
                at_most=CHECKPOINT_INTERVAL_SECONDS,
            ),
            rate_limits=_rate_limits(env),
            console_idle_timeout=_number(
                env, "SUPPORTGATE_CONSOLE_IDLE_TIMEOUT", CONSOLE_IDLE_TIMEOUT
            ),
            console_session_timeout=_number(
                env, "SUPPORTGATE_CONSOLE_SESSION_TIMEOUT", CONSOLE_SESSION_TIMEOUT
            ),
            webhook_allow=tuple(
                entry.strip()
                for entry in (env.get("SUPPORTGATE_WEBHOOK_ALLOW") or "").split(",")
                if entry.strip()
            ),
            server_limits=ServerLimits(
                header_timeout=_number(env, "SUPPORTGATE_HEADER_TIMEOUT", 10.0),
                keep_alive_timeout=_count(env, "SUPPORTGATE_KEEP_ALIVE_TIMEOUT", 5),
                max_connections=_count(env, "SUPPORTGATE_MAX_CONNECTIONS", 1000),
            ),
            database_timeouts=DatabaseTimeouts(
                statement=_timeout(env, "SUPPORTGATE_DB_STATEMENT_TIMEOUT", 30.0),
                lock=_timeout(env, "SUPPORTGATE_DB_LOCK_TIMEOUT", 5.0),
            ),
            matrix_source=env.get("SUPPORTGATE_MATRIX_SOURCE") or None,
            matrix_poll=_interval(env, "SUPPORTGATE_MATRIX_POLL", DEFAULT_MATRIX_POLL_SECONDS),
            matrix_fetch_timeout=_number(
                env,
                "SUPPORTGATE_MATRIX_FETCH_TIMEOUT",
                DEFAULT_MATRIX_FETCH_TIMEOUT,
                what="seconds one read of the matrix source may take",
                at_most=MAX_MATRIX_FETCH_TIMEOUT,
            ),
            matrix_cache_dir=_path(env.get("SUPPORTGATE_MATRIX_CACHE_DIR")),
            matrix_ca_file=_path(env.get("SUPPORTGATE_MATRIX_CA_FILE")),
            evaluation_process=_switch(env, "SUPPORTGATE_EVALUATION_PROCESS"),
        )


MAX_OPA_TIMEOUT_SECONDS = 60.0


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


SWITCH = ("on", "off")
MAX_REFUSAL_DELAY = 10.0


def _switch(env: Mapping[str, str], name: str) -> bool:
    switch = env.get(name) or "on"
    check_choice(name, switch, SWITCH)
    return switch == "on"


def _rate_limits(env: Mapping[str, str]) -> RateLimits | None:
    if not _switch(env, "SUPPORTGATE_RATE_LIMITS"):
        return None
    default = RateLimits()
    return RateLimits(
        auth_failures_burst=_count(
            env, "SUPPORTGATE_RATE_AUTH_FAILURES_BURST", default.auth_failures_burst
        ),
        auth_failures_per_second=_rate(
            env, "SUPPORTGATE_RATE_AUTH_FAILURES_PER_SECOND", default.auth_failures_per_second
        ),
        auth_refusal_delay=_number(
            env,
            "SUPPORTGATE_RATE_AUTH_REFUSAL_DELAY",
            default.auth_refusal_delay,
            what="seconds a refusal is held",
            zero=True,
            at_most=MAX_REFUSAL_DELAY,
        ),
        key_burst=_count(env, "SUPPORTGATE_RATE_KEY_BURST", default.key_burst),
        key_per_second=_rate(env, "SUPPORTGATE_RATE_KEY_PER_SECOND", default.key_per_second),
    )


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    value = env.get(name)
    if not value:
        return default
    if not value.isascii() or not value.isdigit() or int(value) < 1:
        raise UsageError(f"a whole number above 0, got {value!r}", field=name)
    return int(value)


def _number(
    env: Mapping[str, str],
    name: str,
    default: float,
    *,
    what: str = "seconds",
    zero: bool = False,
    at_most: float = math.inf,
) -> float:
    value = env.get(name)
    if not value:
        return default
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    low_ok = number >= 0 if zero else number > 0  # NaN fails both
    if not (low_ok and number <= at_most and number < math.inf):
        low = "0 or more" if zero else "more than 0"
        high = "" if at_most == math.inf else f" and at most {at_most:g}"
        raise UsageError(f"{what}: {low}{high}, got {value!r}", field=name)
    return number


def _rate(env: Mapping[str, str], name: str, default: float) -> float:
    return _number(env, name, default, what="tokens per second")


def _timeout(env: Mapping[str, str], name: str, default: float) -> float:
    return _number(env, name, default, what="seconds (0: no limit)", zero=True)


MAX_MATRIX_FETCH_TIMEOUT = 600.0
_INTERVAL_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}
MAX_INTERVAL_SECONDS = 86400.0


def _interval(env: Mapping[str, str], name: str, default: float) -> float:
    value = (env.get(name) or "").strip()
    if not value:
        return default
    unit = _INTERVAL_UNITS.get(value[-1].lower())
    number = value[:-1] if unit is not None else value
    try:
        seconds = float(number) * (unit or 1.0)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= MAX_INTERVAL_SECONDS:  # NaN fails too
        raise UsageError(
            f"an interval such as 30s, 5m or 1h, at most 24h, got {value!r}", field=name
        )
    return seconds
