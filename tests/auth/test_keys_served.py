"""Revocation across replicas (CONTRACT section 7): two `supportgate serve` processes on one
PostgreSQL. A key revoked through one replica's API is refused by it at once and by the other
within 2 s; one revoked with `supportgate keys revoke` (a third process on the same
database) is refused by both within 2 s; a key created on one works on the other as soon."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..server import Served, clean_env, make_keys, run_cli, serving
from ..services import temporary_database

pytestmark = pytest.mark.postgres

WITHIN_S = 2.0  # the contract's bound on every other replica
PROBE = "/v1/manifests"  # procurement reads: nothing is written by the probes
Replicas = tuple[Served, Served, str, dict[str, str]]
"""Two servers on one database, its URL, and role -> key."""


def _status(server: Served, secret: str) -> int:
    headers = {"Authorization": f"Bearer {secret}"}
    return httpx.get(server.url + PROBE, headers=headers, timeout=10).status_code


def _seconds_until(server: Served, secret: str, status: int, limit: float) -> float | None:
    """Seconds until `server` answers `status` for the key (polled), None if not in `limit`."""
    start = time.monotonic()
    while True:
        if _status(server, secret) == status:
            return time.monotonic() - start
        if time.monotonic() - start > limit:
            return None


@pytest.fixture
def replicas(postgres_url: str, tmp_path: Path) -> Iterator[Replicas]:
    with temporary_database(postgres_url) as url:
        keys = make_keys(url)
        env = clean_env(SUPPORTGATE_DATABASE_URL=url)
        with serving(tmp_path / "a", env=env) as first, serving(tmp_path / "b", env=env) as second:
            yield first, second, url, keys


def _create(server: Served, admin: str, name: str) -> str:
    response = httpx.post(
        server.url + "/v1/keys",
        json={"name": name, "role": "procurement"},
        headers={"Authorization": f"Bearer {admin}"},
        timeout=10,
    )
    assert response.status_code == 201, response.text
    secret: str = response.json()["key"]
    return secret


def test_a_key_revoked_on_one_replica_is_refused_by_the_other_within_2_s(
    replicas: Replicas, tmp_path: Path
) -> None:
    first, second, url, keys = replicas
    secret = _create(first, keys["admin"], "bot")
    assert _status(first, secret) == 200
    assert _seconds_until(second, secret, 200, WITHIN_S) is not None  # created on the other
    assert _status(second, secret) == 200  # and now in its memory

    revoked = httpx.delete(
        first.url + "/v1/keys/bot", headers={"Authorization": f"Bearer {keys['admin']}"}
    )
    assert revoked.status_code == 204, revoked.text
    assert _status(first, secret) == 401  # at once, here
    waited = _seconds_until(second, secret, 401, WITHIN_S)
    assert waited is not None, f"the other replica still took the key {WITHIN_S} s later"
    assert _status(second, secret) == 401

    # Through the CLI, which writes the same database: both replicas, within 2 s.
    other = _create(second, keys["admin"], "cli-revoked")
    assert _status(second, other) == 200
    assert _seconds_until(first, other, 200, WITHIN_S) is not None
    done = run_cli(
        ["keys", "revoke", "cli-revoked"],
        env=clean_env(SUPPORTGATE_DATABASE_URL=url),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    for server in (first, second):
        assert _seconds_until(server, other, 401, WITHIN_S) is not None, server.url

    for server in (first, second):  # the keys not revoked still work
        assert _status(server, keys["procurement"]) == 200
