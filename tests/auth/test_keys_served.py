"""Revocation across replicas (CONTRACT section 7): two `supportgate serve` processes on one
PostgreSQL. A key revoked through one replica's API is refused by it at once and by the other
after its next read of the keys; one revoked with `supportgate keys revoke` (a third process on
the same database) is refused by both; a key created on one works on the other as soon. The
contract's 2 s holds because a replica's keys are at most REFRESH_SECONDS old, which
tests/app/test_memory_reloads.py shows on a fake clock; no test here times a request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from supportgate.auth.services import REFRESH_SECONDS

from ..server import Served, clean_env, make_keys, run_cli, serving
from ..services import temporary_database
from ..waiting import wait_until

pytestmark = pytest.mark.postgres

WITHIN_S = 2.0  # the contract's bound on every other replica
PROBE = "/v1/manifests"  # procurement reads: nothing is written by the probes
Replicas = tuple[Served, Served, str, dict[str, str]]
"""Two servers on one database, its URL, and role -> key."""


def _status(server: Served, secret: str) -> int:
    headers = {"Authorization": f"Bearer {secret}"}
    return httpx.get(server.url + PROBE, headers=headers, timeout=10).status_code


def _answers(server: Served, secret: str, status: int) -> None:
    """Wait until `server` answers `status` for the key; the wait's limit is a safety net."""
    wait_until(lambda: _status(server, secret) == status, f"{status} from {server.url}")


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
    assert REFRESH_SECONDS < WITHIN_S
    first, second, url, keys = replicas
    secret = _create(first, keys["admin"], "bot")
    assert _status(first, secret) == 200
    _answers(second, secret, 200)  # created on the other
    assert _status(second, secret) == 200  # and now in its memory

    revoked = httpx.delete(
        first.url + "/v1/keys/bot", headers={"Authorization": f"Bearer {keys['admin']}"}
    )
    assert revoked.status_code == 204, revoked.text
    assert _status(first, secret) == 401  # at once, here
    _answers(second, secret, 401)
    assert _status(second, secret) == 401

    # Through the CLI, which writes the same database: both replicas.
    other = _create(second, keys["admin"], "cli-revoked")
    assert _status(second, other) == 200
    _answers(first, other, 200)
    done = run_cli(
        ["keys", "revoke", "cli-revoked"],
        env=clean_env(SUPPORTGATE_DATABASE_URL=url),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    for server in (first, second):
        _answers(server, other, 401)

    for server in (first, second):  # the keys not revoked still work
        assert _status(server, keys["procurement"]) == 200
