"""Data for the browser tests and the screenshots, sent to a real server over HTTP: a webhook,
the examples (examples/manifests/), a second matrix version that lists H100 (sm90), committed
to the server's matrix source (a git repository) and synced, the H100 pool and its deployments
posted again under it (verdict changes: a timeline, a diff, alerts), a waiver."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import yaml

from ..examples import EXAMPLES, expected
from ..matrix_upstreams import GitRepo
from ..waiting import wait_until

NEW_VERSION = "2026.12.1"
TIMEOUT_S = 30.0


def proposed_matrix(current: dict[str, Any], version: str = NEW_VERSION) -> dict[str, Any]:
    """The current matrix document with H100 (sm90, CUDA >= 12.4) added and 60 days of
    evidence: what the seed publishes, and what the impact tests propose."""
    document = {k: v for k, v in current.items() if k != "effective_from"}
    document["version"] = version
    document["evidence_max_age_days"] = 60
    engine = document["engines"]["deepinfer"]
    engine["platforms"] = [
        *engine["platforms"],
        {"vendor": "nvidia", "arch": "sm90", "toolkit": {"name": "cuda", "min": "12.4"}},
    ]
    return document


def seed(url: str, keys: dict[str, str], source: GitRepo) -> None:
    """Send the whole seed to the server at `url` (keys: role -> key) that follows the
    matrix in `source`."""
    with httpx.Client(base_url=url, timeout=TIMEOUT_S) as client:
        Seeder(client, keys, source).all()


class Seeder:
    def __init__(self, client: httpx.Client, keys: dict[str, str], source: GitRepo) -> None:
        self._client = client
        self._keys = keys
        self._source = source

    def _send(self, method: str, path: str, role: str, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {self._keys[role]}", **kwargs.pop("headers", {})}
        response = self._client.request(method, path, headers=headers, **kwargs)
        if response.status_code >= 300:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
        return response.json()

    def post_example(self, name: str) -> dict[str, Any]:
        body = (EXAMPLES / name).read_bytes()
        return dict(
            self._send(
                "POST",
                "/v1/evaluations",
                "ci",
                content=body,
                headers={"Content-Type": "application/yaml"},
            )
        )

    def sync_matrix(self, document: dict[str, Any]) -> None:
        """Commit `document` to the matrix source, and sync until its version is published."""
        self._source.commit(yaml.safe_dump(document, sort_keys=False).encode())
        self._send("POST", "/v1/matrix/sync", "admin")

        def published() -> bool:
            versions = self._send("GET", "/v1/matrix/versions", "procurement")["items"]
            return any(v["version"] == document["version"] for v in versions)

        wait_until(published, f"matrix {document['version']} from the source")

    def current_matrix(self) -> dict[str, Any]:
        return dict(self._send("GET", "/v1/matrix", "procurement")["document"])

    def all(self) -> None:
        # subscribed first: the verdict changes below are delivered (to a closed port: retried)
        self._send(
            "POST",
            "/v1/webhooks",
            "admin",
            json={"url": "http://127.0.0.1:9/procurement-inbox", "description": "procurement"},
        )
        for name in expected().decisions:  # in tracking order: hardware first
            self.post_example(name)
        self.sync_matrix(proposed_matrix(self.current_matrix()))

        def swept() -> bool:  # the pool's verdict turned by the matrix, before it is posted again
            pool = self._send("GET", "/v1/manifests/HardwareManifest/h100-pool-a", "procurement")
            return bool(pool["latest_decision"]["matrix_version"] == NEW_VERSION)

        wait_until(swept, "the matrix sweep's decision on h100-pool-a")
        for name in ("hw-h100-pool-a.yaml", "dep-h100-port-trial.yaml", "dep-h100-production.yaml"):
            self.post_example(name)
        production = yaml.safe_load((EXAMPLES / "dep-h100-production.yaml").read_text())
        expires = datetime.now(UTC) + timedelta(days=14)
        self._send(
            "POST",
            "/v1/waivers",
            "admin",
            json={
                "rule": "port.production",
                "kind": "DeploymentManifest",
                "name": production["metadata"]["name"],
                "justification": "Production pilot while the parity suite runs (ticket PROC-42)",
                "expires_at": expires.isoformat(),
            },
        )
