"""A running supportgate API for tests: the real app, in-process, on a real database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from litestar.testing import TestClient

from supportgate.app import create_app
from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.config import Settings
from supportgate.runtime import Runtime

from .opa import shared_credentials
from .receiver import ALLOW
from .signing import with_test_key


@dataclass
class Api:
    client: TestClient[Any]
    runtime: Runtime
    keys: dict[str, str]  # role -> secret

    def headers(self, role: str | None, **extra: str) -> dict[str, str]:
        headers = dict(extra)
        if role is not None:
            headers["Authorization"] = f"Bearer {self.keys[role]}"
        return headers

    def post_manifest(self, path: Path, role: str = "ci", **headers: str) -> Any:
        return self.client.post(
            "/v1/evaluations",
            content=path.read_bytes(),
            headers=self.headers(role, **{"Content-Type": "application/yaml", **headers}),
        )


@contextmanager
def running_api(
    database_url: str, *, clock: Clock = SYSTEM_CLOCK, key_suffix: str = "", **settings: Any
) -> Iterator[Api]:
    """The app on `database_url` with one key per role (named after the role); its parts ask
    `clock` the time (a tests.clock.FakeClock for tests of expiry and schedules). On
    PostgreSQL the tests' checkpoint signing key, unless `settings` name one.

    With an `opa_url`, the tests' OPA credentials (tests/opa.py) unless `settings` name
    others.

    Webhooks may go to 127.0.0.1, where the tests' receivers listen (tests/receiver.py),
    unless `webhook_allow` says otherwise. `key_suffix` names the keys apart from those of an
    earlier run on the same database (a service restarted)."""
    settings.setdefault("webhook_allow", ALLOW)  # the tests' receivers are on loopback
    if settings.get("opa_url"):  # the tests' OPA credentials (tests/opa.py), unless given
        for name, value in shared_credentials().settings().items():
            settings.setdefault(name, value)
    base = with_test_key(replace(Settings.from_env({}), database_url=database_url))
    configured = replace(base, **settings)
    runtime = Runtime.build(configured, clock=clock)
    app = create_app(runtime=runtime)
    with TestClient(app) as client:
        keys = {
            role: runtime.keys.create(name=role + key_suffix, role=role).key
            for role in ("ci", "procurement", "admin")
        }
        yield Api(client=client, runtime=runtime, keys=keys)
