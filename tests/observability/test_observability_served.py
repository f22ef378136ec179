"""The log of a real `supportgate serve` (stdout is no terminal, so JSON lines): one canonical
`request` event per request with its id, the API key's name (never the key), the manifest and
verdict, status and duration; no secret appears anywhere in what the server writes."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import httpx

from ..api_support import hardware
from ..server import clean_env, make_keys, serving

WRONG_KEY = "sg_this-key-was-never-issued-0123456789abcdefgh"


def test_one_canonical_request_event_per_request_and_no_secrets(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'supportgate.db'}"
    keys = make_keys(url)
    body = json.dumps(hardware("pool-a")).encode()

    def auth(role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {keys[role]}"}

    with serving(tmp_path, env=clean_env(SUPPORTGATE_DATABASE_URL=url)) as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            sent: dict[str, httpx.Response] = {
                "req-post": client.post(
                    "/v1/evaluations",
                    content=body,
                    headers={**auth("ci"), "X-Request-ID": "req-post", "Idempotency-Key": "k1"},
                ),
                "req-replay": client.post(
                    "/v1/evaluations",
                    content=body,
                    headers={**auth("ci"), "X-Request-ID": "req-replay", "Idempotency-Key": "k1"},
                ),
                "req-bad": client.post(
                    "/v1/evaluations",
                    content=b"{",
                    headers={**auth("ci"), "X-Request-ID": "req-bad"},
                ),
                "req-unknown-key": client.get(
                    "/v1/manifests",
                    headers={
                        "Authorization": f"Bearer {WRONG_KEY}",
                        "X-Request-ID": "req-unknown-key",
                    },
                ),
                "req-forbidden": client.get(
                    "/v1/manifests", headers={**auth("ci"), "X-Request-ID": "req-forbidden"}
                ),
                "req-list": client.get(
                    "/v1/manifests", headers={**auth("procurement"), "X-Request-ID": "req-list"}
                ),
                "req-live": client.get("/health/live", headers={"X-Request-ID": "req-live"}),
                "req-no-route": client.get(
                    "/wp-login.php", headers={"X-Request-ID": "req-no-route"}
                ),
                "req-no-method": client.put(
                    "/v1/evaluations", headers={**auth("ci"), "X-Request-ID": "req-no-method"}
                ),
            }
        statuses = {request_id: response.status_code for request_id, response in sent.items()}
        assert statuses == {
            "req-post": 201,
            "req-replay": 201,
            "req-bad": 400,
            "req-unknown-key": 401,
            "req-forbidden": 403,
            "req-list": 200,
            "req-live": 200,
            "req-no-route": 404,
            "req-no-method": 405,
        }
        for request_id, response in sent.items():
            assert response.headers["x-request-id"] == request_id
        # uvicorn shuts down gracefully on SIGTERM, then re-raises it as its exit status.
        assert server.stop() in {0, -signal.SIGTERM}

    events = server.log_events()  # every stdout line is one JSON object
    assert server.stderr.read_text() == "", "every log line goes to stdout, as JSON"
    messages = {str(event.get("event")) for event in events}
    assert "supportgate_started" in messages
    assert "Application shutdown complete." in messages  # uvicorn's own, as JSON too
    requests: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if event.get("event") == "request":
            requests.setdefault(event["request_id"], []).append(event)
    assert {request_id: len(requests.get(request_id, [])) for request_id in sent} == dict.fromkeys(
        sent, 1
    )
    others = [found for request_id, found in requests.items() if request_id not in sent]
    assert all(event["route"] == "/health/live" for found in others for event in found)
    one = {request_id: found[0] for request_id, found in requests.items()}

    posted = one["req-post"]
    assert posted["key_name"] == "ci"
    assert posted["manifest"] == "HardwareManifest/pool-a"
    assert posted["verdict"] == sent["req-post"].json()["verdict"] == "experimental"
    assert (posted["method"], posted["route"], posted["status"]) == ("POST", "/v1/evaluations", 201)
    assert isinstance(posted["duration_ms"], float)
    assert posted["duration_ms"] > 0
    assert posted["level"] == "info"
    assert posted["timestamp"].endswith("Z")

    assert one["req-replay"]["status"] == 201
    assert one["req-bad"]["status"] == 400
    assert "verdict" not in one["req-bad"]
    assert one["req-unknown-key"]["key_name"] is None
    assert one["req-forbidden"]["key_name"] == "ci"
    assert one["req-forbidden"]["status"] == 403
    assert one["req-list"]["key_name"] == "procurement"
    assert one["req-live"]["key_name"] is None
    assert one["req-live"]["route"] == "/health/live"
    assert (one["req-no-route"]["route"], one["req-no-route"]["status"]) == ("unmatched", 404)
    assert one["req-no-method"]["status"] == 405

    written = server.output()
    for secret in (*keys.values(), WRONG_KEY):
        assert secret not in written
        assert secret[8:] not in written  # not even past the shown prefix
    assert "Bearer" not in written
