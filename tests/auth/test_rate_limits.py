"""Rate limits (the contract; docs/rate-limits.md): too many failed authentications
from one client address, or one key's burst, are 429 with `Retry-After`.

The attack of issue 12: 3,000 random keys were 3,000 x 401 with a database read each. Now the
address's budget of unknown keys is looked up, and the rest are 429 decided in memory, while
a valid key still passes from the same address (a CI runner behind the attacker's NAT).
Refill is driven by a FakeClock, never by sleeping.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import event

from supportgate.auth import guard
from supportgate.auth.keys import generate_key
from supportgate.config import RateLimits, Settings
from supportgate.console.session import CSRF_FIELD
from supportgate.errors import UsageError

from ..api import Api, running_api
from ..api_support import example, post
from ..clock import FakeClock
from ..console.support import csrf

DEFAULTS = RateLimits()
AT_ONCE = replace(DEFAULTS, auth_refusal_delay=0.0)  # tests do not wait out the delay


@contextmanager
def limited_api(url: str, clock: FakeClock, **limits: Any) -> Iterator[Api]:
    with running_api(url, clock=clock, rate_limits=replace(AT_ONCE, **limits)) as api:
        yield api


@contextmanager
def key_reads(api: Api) -> Iterator[list[str]]:
    """Every SQL statement on the api_keys table while the block runs."""
    reads: list[str] = []

    def count(*args: Any) -> None:
        statement = args[2]
        if "api_keys" in statement:
            reads.append(statement)

    event.listen(api.runtime.db, "before_cursor_execute", count)
    try:
        yield reads
    finally:
        event.remove(api.runtime.db, "before_cursor_execute", count)


def _get(api: Api, key: str) -> Any:
    return api.client.get("/v1/manifests", headers={"Authorization": f"Bearer {key}"})


def _too_many(response: Any) -> int:
    """The Retry-After of a 429 (asserting it is one)."""
    assert response.status_code == 429, response.text
    retry_after = int(response.headers["retry-after"])
    assert retry_after >= 1
    assert response.json()["status_code"] == 429
    return retry_after


def test_3000_random_keys_are_429_after_the_budget_without_a_database_read(
    migrated_db_url: str, clock: FakeClock
) -> None:
    with running_api(migrated_db_url, clock=clock, rate_limits=AT_ONCE) as api:  # defaults
        budget = DEFAULTS.auth_failures_burst
        with key_reads(api) as reads:
            statuses = [_get(api, generate_key()).status_code for _ in range(budget)]
            assert statuses == [401] * budget
            looked_up = len(reads)
            assert looked_up <= 1  # one read of the key table (KeyService's copy), not one a key
            refused = [_get(api, generate_key()) for _ in range(3000 - budget)]
            assert {response.status_code for response in refused} == {429}
            assert {_too_many(response) for response in refused} == {1}  # one token a second
            assert len(reads) == looked_up  # no read for any of the 2,900


def test_a_valid_key_passes_from_a_flooded_address_and_refill_admits_one_more_lookup(
    migrated_db_url: str, clock: FakeClock
) -> None:
    with limited_api(
        migrated_db_url, clock, auth_failures_burst=5, auth_failures_per_second=0.5
    ) as api:
        assert _get(api, api.keys["procurement"]).status_code == 200  # the runner
        for _ in range(5):
            assert _get(api, generate_key()).status_code == 401
        assert _too_many(_get(api, generate_key())) == 2  # 0.5 tokens a second
        assert _get(api, api.keys["procurement"]).status_code == 200
        clock.advance(2)
        assert _get(api, generate_key()).status_code == 401  # one token back: one lookup
        _too_many(_get(api, generate_key()))
        assert _get(api, api.keys["ci"]).status_code == 403  # looked up: its role decides


def test_a_valid_key_never_used_on_this_replica_passes_from_a_flooded_address(
    migrated_db_url: str, clock: FakeClock
) -> None:
    """The runner behind the attacker's NAT, on a replica its key has not been used on: the
    keys in memory say it is a key, so it is looked up rather than refused."""
    with limited_api(migrated_db_url, clock, auth_failures_burst=3) as api:
        for _ in range(3):
            assert _get(api, generate_key()).status_code == 401
        _too_many(_get(api, generate_key()))
        assert post(api, example("hw-b200-pool.yaml"), role="ci").status_code == 201
        _too_many(_get(api, generate_key()))


def test_a_revoked_key_is_refused_before_the_lookup_from_a_flooded_address(
    migrated_db_url: str, clock: FakeClock
) -> None:
    with limited_api(migrated_db_url, clock, auth_failures_burst=1) as api:
        for role in ("procurement", "admin"):
            assert _get(api, api.keys[role]).status_code == 200
        assert _get(api, generate_key()).status_code == 401  # the address's one failure
        api.runtime.keys.revoke("procurement")
        assert _get(api, api.keys["admin"]).status_code == 200  # the keys read again
        with key_reads(api) as reads:
            _too_many(_get(api, api.keys["procurement"]))
            assert reads == []
        assert _get(api, api.keys["admin"]).status_code == 200


def test_a_refusal_for_unknown_keys_is_held_for_the_delay_and_a_known_key_is_not(
    migrated_db_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard waits `auth_refusal_delay` before the 429 (recorded here, not slept), so a
    flood that waits for its answers sends one request per connection per delay."""
    waits: list[float] = []

    async def recorded(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(guard, "sleep", recorded)
    with limited_api(migrated_db_url, clock, auth_failures_burst=1, auth_refusal_delay=2.5) as api:
        assert _get(api, api.keys["admin"]).status_code == 200
        assert _get(api, generate_key()).status_code == 401
        assert waits == []  # within the budget: answered at once
        _too_many(_get(api, generate_key()))
        assert waits == [2.5]
        assert _get(api, api.keys["admin"]).status_code == 200
        assert waits == [2.5]


def test_requests_without_a_key_never_count_as_failed_authentications(
    migrated_db_url: str, clock: FakeClock
) -> None:
    with limited_api(migrated_db_url, clock, auth_failures_burst=2) as api:
        for _ in range(20):
            assert api.client.get("/v1/manifests").status_code == 401
        assert _get(api, generate_key()).status_code == 401


def test_a_keys_burst_is_429_until_it_refills(migrated_db_url: str, clock: FakeClock) -> None:
    with limited_api(migrated_db_url, clock, key_burst=10, key_per_second=2.0) as api:
        for _ in range(10):
            assert _get(api, api.keys["admin"]).status_code == 200
        response = _get(api, api.keys["admin"])
        assert _too_many(response) == 1
        assert "'admin'" in response.json()["detail"]
        assert _get(api, api.keys["procurement"]).status_code == 200  # another key's own bucket
        clock.advance(0.5)  # one token back
        assert _get(api, api.keys["admin"]).status_code == 200
        _too_many(_get(api, api.keys["admin"]))
        clock.advance(5)  # the whole burst back
        assert [_get(api, api.keys["admin"]).status_code for _ in range(10)] == [200] * 10


def test_the_console_login_counts_failed_keys_too(migrated_db_url: str, clock: FakeClock) -> None:
    with limited_api(migrated_db_url, clock, auth_failures_burst=3) as api:
        token = csrf(api)
        for _ in range(3):
            response = api.client.post("/ui/login", data={"key": generate_key(), CSRF_FIELD: token})
            assert response.status_code == 401
        refused = api.client.post("/ui/login", data={"key": generate_key(), CSRF_FIELD: token})
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "1"
        assert "too many" in refused.text


def test_limits_off_is_401_for_every_unknown_key(migrated_db_url: str) -> None:
    with running_api(migrated_db_url, rate_limits=None) as api:
        statuses = {
            _get(api, generate_key()).status_code for _ in range(DEFAULTS.auth_failures_burst + 50)
        }
        assert statuses == {401}
        for _ in range(50):
            assert _get(api, api.keys["admin"]).status_code == 200


def test_settings_from_the_environment() -> None:
    assert Settings.from_env({}).rate_limits == DEFAULTS
    assert Settings.from_env({"SUPPORTGATE_RATE_LIMITS": "off"}).rate_limits is None
    configured = Settings.from_env(
        {
            "SUPPORTGATE_RATE_AUTH_FAILURES_BURST": "7",
            "SUPPORTGATE_RATE_AUTH_FAILURES_PER_SECOND": "0.25",
            "SUPPORTGATE_RATE_KEY_BURST": "30",
            "SUPPORTGATE_RATE_KEY_PER_SECOND": "12.5",
        }
    ).rate_limits
    assert configured == RateLimits(
        auth_failures_burst=7,
        auth_failures_per_second=0.25,
        auth_refusal_delay=DEFAULTS.auth_refusal_delay,
        key_burst=30,
        key_per_second=12.5,
    )
    delay = {"SUPPORTGATE_RATE_AUTH_REFUSAL_DELAY": "0"}
    assert Settings.from_env(delay).rate_limits == AT_ONCE


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SUPPORTGATE_RATE_LIMITS", "maybe"),
        ("SUPPORTGATE_RATE_AUTH_FAILURES_BURST", "0"),
        ("SUPPORTGATE_RATE_AUTH_FAILURES_BURST", "1.5"),
        ("SUPPORTGATE_RATE_AUTH_FAILURES_PER_SECOND", "nan"),
        ("SUPPORTGATE_RATE_KEY_BURST", "-3"),
        ("SUPPORTGATE_RATE_KEY_PER_SECOND", "inf"),
        ("SUPPORTGATE_RATE_KEY_PER_SECOND", "0"),
        ("SUPPORTGATE_RATE_AUTH_REFUSAL_DELAY", "-1"),
        ("SUPPORTGATE_RATE_AUTH_REFUSAL_DELAY", "60"),
    ],
)
def test_bad_settings_name_their_variable(name: str, value: str) -> None:
    with pytest.raises(UsageError) as refused:
        Settings.from_env({name: value})
    assert refused.value.field == name
