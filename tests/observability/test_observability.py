"""/metrics after real traffic, on SQLite and PostgreSQL: the latency histogram by route and
status, decisions by verdict, and tracked manifests by their current verdict."""

from __future__ import annotations

import random
import string
from collections import Counter
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from structlog.contextvars import merge_contextvars
from structlog.testing import capture_logs

from supportgate.logging import get_logger

from ..api import Api
from ..api_support import created, deployment, example, hardware, post
from ..asgi import post_scope


def _samples(api: Api) -> dict[str, dict[frozenset[tuple[str, str]], float]]:
    """metric sample name -> {labels: value}, from an anonymous scrape."""
    response = api.client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    found: dict[str, dict[frozenset[tuple[str, str]], float]] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            labels = frozenset(sample.labels.items())
            found.setdefault(sample.name, {})[labels] = sample.value
    return found


def _value(
    samples: dict[str, dict[frozenset[tuple[str, str]], float]], name: str, **labels: str
) -> float:
    wanted = set(labels.items())
    return sum(value for found, value in samples.get(name, {}).items() if wanted <= found)


def test_metrics_count_requests_decisions_and_tracked_manifests(api: Api) -> None:
    verdicts = Counter(
        created(api, example(name))["verdict"]
        for name in (
            "hw-b200-pool.yaml",
            "hw-h100-pool-a.yaml",
            "hw-rtx4090-workstation.yaml",
            "dep-h100-port-trial.yaml",
            "dep-h100-production.yaml",
        )
    )
    assert verdicts == {"supported": 1, "experimental": 2, "rejected": 2}
    assert post(api, b"{", content_type="application/json").status_code == 400
    assert api.client.get("/v1/manifests", headers=api.headers("ci")).status_code == 403

    samples = _samples(api)
    duration = "supportgate_http_request_duration_seconds"
    evaluations = {"method": "POST", "route": "/v1/evaluations"}
    assert _value(samples, duration + "_count", **evaluations, status="201") == 5
    assert _value(samples, duration + "_count", **evaluations, status="400") == 1
    assert _value(samples, duration + "_count", method="GET", route="/v1/manifests") == 1
    assert _value(samples, duration + "_sum", **evaluations, status="201") > 0
    buckets = {dict(labels)["le"] for labels in samples[duration + "_bucket"]}
    assert {"0.005", "0.1", "1.0", "+Inf"} <= buckets
    every = _value(samples, duration + "_bucket", **evaluations, status="201", le="+Inf")
    assert every == 5

    for verdict, count in verdicts.items():
        decided = _value(samples, "supportgate_decisions_total", verdict=verdict)
        assert decided == count, verdict
        submitted = _value(
            samples, "supportgate_decisions_total", verdict=verdict, cause="submission"
        )
        assert submitted == count, verdict
        assert _value(samples, "supportgate_tracked_manifests", verdict=verdict) == count


def test_the_tracked_gauge_follows_the_current_verdicts(api: Api) -> None:
    created(api, deployment("trial", ref="pool-a"))  # no hardware yet: rejected
    gauge = "supportgate_tracked_manifests"
    samples = _samples(api)
    assert _value(samples, gauge, verdict="rejected") == 1
    assert _value(samples, gauge, verdict="experimental") == 0

    created(api, hardware("pool-a"))
    created(api, deployment("trial", ref="pool-a"))  # now experimental: moves, not adds
    samples = _samples(api)
    assert _value(samples, gauge, verdict="rejected") == 0
    assert _value(samples, gauge, verdict="experimental") == 2
    assert _value(samples, "supportgate_decisions_total", verdict="rejected") == 1
    assert _value(samples, "supportgate_decisions_total", verdict="experimental") == 2

    untracked = api.client.delete(
        "/v1/manifests/DeploymentManifest/trial", headers=api.headers("admin")
    )
    assert untracked.status_code == 204
    assert _value(_samples(api), gauge, verdict="experimental") == 1


def test_every_response_carries_a_request_id(api: Api) -> None:
    chosen = api.client.get("/health/live", headers={"X-Request-ID": "ci-build-812"})
    assert chosen.headers["x-request-id"] == "ci-build-812"
    made = api.client.get("/v1/manifests", headers=api.headers("procurement"))
    assert len(made.headers["x-request-id"]) == 32
    refused = api.client.get("/v1/manifests")
    assert refused.status_code == 401
    assert refused.headers["x-request-id"] != made.headers["x-request-id"]
    unrouted = api.client.get("/no/such/route", headers={"X-Request-ID": "scanner-1"})
    assert unrouted.status_code == 404
    assert unrouted.headers["x-request-id"] == "scanner-1"
    samples = _samples(api)
    duration = "supportgate_http_request_duration_seconds_count"
    assert _value(samples, duration, route="unmatched", status="404") == 1
    assert _value(samples, duration, route="/v1/manifests", status="401") == 1


def test_every_event_of_a_request_carries_its_request_id(sqlite_api: Api) -> None:
    """Not only the request line: what a service logs on a request's behalf (a waiver made,
    a waiver deleted) carries that request's id, another request's its own, and an event
    logged after the requests none (the id is unbound when its request ends)."""
    waiver = {
        "rule": "port.production",
        "kind": "DeploymentManifest",
        "name": "v41-flash-h100-prod",
        "justification": "H100 production pilot approved by the platform board (PLAT-12)",
        "expires_at": "2199-01-01T00:00:00Z",
    }
    admin = sqlite_api.headers("admin")
    with capture_logs(processors=[merge_contextvars]) as logs:
        made = sqlite_api.client.post(
            "/v1/waivers", json=waiver, headers={**admin, "X-Request-ID": "req-make"}
        )
        assert made.status_code == 201, made.text
        deleted = sqlite_api.client.delete(
            f"/v1/waivers/{made.json()['id']}", headers={**admin, "X-Request-ID": "req-delete"}
        )
        assert deleted.status_code == 204, deleted.text
        get_logger("test").info("after_the_requests")
    assert [(event["event"], event.get("request_id")) for event in logs] == [
        ("waiver_created", "req-make"),
        ("request", "req-make"),
        ("waiver_deleted", "req-delete"),
        ("request", "req-delete"),
        ("after_the_requests", None),
    ]


def test_an_unexpected_error_is_a_bare_500_logged_with_its_traceback(
    sqlite_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(**_: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(sqlite_api.runtime.tracking, "page", broken)
    with capture_logs() as logs:
        failed = sqlite_api.client.get("/v1/manifests", headers=sqlite_api.headers("procurement"))
        refused = sqlite_api.client.get("/v1/manifests/Gpu/x", headers=sqlite_api.headers("admin"))
    assert failed.status_code == 500
    assert failed.json() == {"status_code": 500, "detail": "Internal Server Error"}
    assert refused.status_code == 400
    unexpected = [event for event in logs if event["event"] == "unexpected_error"]
    assert len(unexpected) == 1, "only the 500 is logged as unexpected, not the 400"
    assert unexpected[0]["path"] == "/v1/manifests"
    assert isinstance(unexpected[0]["exc_info"], RuntimeError)
    assert unexpected[0]["log_level"] == "error"
    statuses = [event["status"] for event in logs if event["event"] == "request"]
    assert statuses == [500, 400]


def test_a_client_that_hangs_up_mid_body_is_no_unexpected_error(sqlite_api: Api) -> None:
    """A load generator stopping or a cancelled CI job: logged as a disconnect, no traceback."""
    app = sqlite_api.client.app
    sent: list[dict[str, Any]] = []
    arriving: list[dict[str, Any]] = [
        {"type": "http.request", "body": b'{"kind": "Hardware', "more_body": True},
        {"type": "http.disconnect"},
    ]

    async def receive() -> dict[str, Any]:
        return arriving.pop(0) if arriving else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = post_scope(
        "/v1/evaluations",
        [
            (b"host", b"testserver"),
            (b"content-type", b"application/json"),
            (b"authorization", f"Bearer {sqlite_api.keys['ci']}".encode()),
        ],
    )
    with capture_logs() as logs, sqlite_api.client.portal() as portal:
        portal.call(app, scope, receive, send)

    events = [event["event"] for event in logs]
    assert "client_disconnected" in events
    assert "unexpected_error" not in events


def test_readiness_names_each_check(api: Api) -> None:
    """The database, the ledger's writer and the policy engine, each by name."""
    response = api.client.get("/health/ready")
    assert response.status_code == 200, response.text
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "ledger": "ok", "policy_engine": "ok"},
    }


def test_invented_methods_and_paths_add_a_bounded_number_of_series(sqlite_api: Api) -> None:
    """3,000 anonymous requests with made-up methods and paths: the latency histogram's series
    are labelled `other` and `unmatched`, so they cannot grow with what clients invent."""
    rng = random.Random(12)  # noqa: S311 - made-up requests, not secrets
    duration = "supportgate_http_request_duration_seconds_count"
    before = set(_samples(sqlite_api).get(duration, {}))
    for number in range(3000):
        method = "".join(rng.choices(string.ascii_uppercase, k=rng.randint(3, 12)))
        path = rng.choice(("/v1/manifests/", "/v1/", "/", "/ui/")) + f"{number}-{rng.random()}"
        sqlite_api.client.request(method, path)
    added = set(_samples(sqlite_api).get(duration, {})) - before
    methods = {dict(labels)["method"] for labels in added}
    routes = {dict(labels)["route"] for labels in added}
    assert methods <= {"other", "GET"}, methods
    assert len(routes) <= 10, routes  # a handful of templates, not 3,000 paths
    assert len(added) <= 30, added
