"""The webhook endpoints on SQLite and PostgreSQL: subscribe (secret shown once), list,
delete, the delivery log; roles and refusals; and an alert delivered through the running
app's dispatcher to a real receiver, with the pending-deliveries gauge."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from supportgate.db import transaction
from supportgate.webhooks.outbox import enqueue_alert_deliveries

from ..api import Api, running_api
from ..api_support import created, hardware, named
from ..observability.test_observability import _samples, _value
from ..receiver import Receiver, running_receiver, verify
from ..services import copy_sqlite
from ..waiting import wait_until
from .test_webhook_delivery import alert

PENDING = "supportgate_webhook_deliveries_pending"


def subscribe(api: Api, body: Any, role: str | None = "admin") -> Any:
    return api.client.post("/v1/webhooks", json=body, headers=api.headers(role))


def get(api: Api, path: str, role: str | None = "admin", **params: Any) -> Any:
    return api.client.get(path, params=params, headers=api.headers(role))


def enqueue(api: Api, *numbers: int) -> int:
    with transaction(api.runtime.sessions, write=True) as session:
        return enqueue_alert_deliveries(session, [alert(n) for n in numbers], datetime.now(UTC))


def test_subscribe_list_and_delete(api: Api) -> None:
    response = subscribe(api, {"url": "https://hooks.example.com/a", "description": "ops"})
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["url"] == "https://hooks.example.com/a"
    assert created["description"] == "ops"
    assert (created["state"], created["created_by"]) == ("active", "admin")
    assert created["secret"].startswith("whsec_")
    assert len(base64.b64decode(created["secret"].removeprefix("whsec_"))) == 32
    other = subscribe(api, {"url": "http://127.0.0.1:9/b"}).json()
    assert other["secret"] != created["secret"]

    listed = get(api, "/v1/webhooks")
    assert listed.status_code == 200
    items = listed.json()["items"]
    assert [item["id"] for item in items] == [created["id"], other["id"]]
    assert all("secret" not in item for item in items)
    assert items[0] == {key: value for key, value in created.items() if key != "secret"}

    deleted = api.client.delete(f"/v1/webhooks/{created['id']}", headers=api.headers("admin"))
    assert deleted.status_code == 204
    assert [item["id"] for item in get(api, "/v1/webhooks").json()["items"]] == [other["id"]]
    again = api.client.delete(f"/v1/webhooks/{created['id']}", headers=api.headers("admin"))
    assert again.status_code == 404
    assert get(api, f"/v1/webhooks/{created['id']}/deliveries").status_code == 404


def test_webhooks_need_the_admin_role(api: Api) -> None:
    body = {"url": "https://hooks.example.com/a"}
    assert subscribe(api, body, role=None).status_code == 401
    assert subscribe(api, body, role="procurement").status_code == 403
    assert get(api, "/v1/webhooks", role="procurement").status_code == 403
    assert get(api, "/v1/webhooks", role=None).status_code == 401
    assert get(api, "/v1/webhooks").json()["items"] == []


@pytest.mark.parametrize(
    "url",
    [
        "http://0x7f000001/hooks",
        "http://127.1/hooks",
        "http://127.0.0.1:8080/hooks",
        "http://[::1]/hooks",
        "http://[::ffff:127.0.0.1]/hooks",
        "http://0.0.0.0/hooks",
        "http://10.0.0.1/hooks",
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost/hooks",
        "https://user:pass@hooks.example.com/a",
    ],
)
def test_internal_targets_are_a_400_naming_url_without_the_allow_list(
    sqlite_template: Path, tmp_path: Path, url: str
) -> None:
    database = copy_sqlite(sqlite_template, tmp_path / "supportgate.db")
    with running_api(database, webhook_allow=()) as api:
        response = subscribe(api, {"url": url})
        assert response.status_code == 400, response.text
        assert named(response.json()) == "$.url"
        assert get(api, "/v1/webhooks").json()["items"] == []


@pytest.mark.parametrize(
    "body",
    [
        {"url": "ftp://hooks.example.com/a"},
        {"url": "hooks.example.com/a"},
        {"url": "https://"},
        {"url": "http://exa mple.com/"},
        {"url": ""},
        {"url": 42},
        {"url": "https://" + "a" * 2100 + ".com"},
        {"description": "no url"},
        {"url": "https://hooks.example.com", "events": ["all"]},
    ],
)
def test_a_bad_subscription_is_a_400_naming_the_field(
    shared_api: Api, body: dict[str, Any]
) -> None:
    response = subscribe(shared_api, body)
    assert response.status_code == 400, response.text
    answer = response.json()
    assert named(answer) == ("$.events" if "events" in body else "$.url")
    assert get(shared_api, "/v1/webhooks").json()["items"] == []


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://hooks.example.com/a", "must be an http or https URL"),
        ("http://exa mple.com/", "must not contain spaces"),
        ("https://user:pass@hooks.example.com/a", "must not carry user:password@"),
    ],
)
def test_a_bad_url_is_refused_in_words_not_as_the_pattern(
    shared_api: Api, url: str, why: str
) -> None:
    response = subscribe(shared_api, {"url": url})
    assert response.status_code == 400, response.text
    assert why in response.json()["detail"]
    assert "regex" not in response.json()["detail"]


def test_an_alert_is_delivered_signed_and_logged(api: Api, receiver: Receiver) -> None:
    created = subscribe(api, {"url": receiver.url}).json()
    assert enqueue(api, 1) == 1

    path = f"/v1/webhooks/{created['id']}/deliveries"

    def delivered() -> list[dict[str, Any]] | None:
        items: list[dict[str, Any]] = get(api, path).json()["items"]
        return items if items and items[0]["status"] == "delivered" else None

    [delivery] = wait_until(delivered, "the delivery")
    assert delivery["alert_id"] == "alert-1"
    assert delivery["next_attempt_at"] is None
    assert delivery["finished_at"] is not None
    [attempt] = delivery["attempts"]
    assert (attempt["attempt"], attempt["status_code"], attempt["error"]) == (1, 200, None)
    assert attempt["duration_ms"] >= 0
    [request] = receiver.received()
    assert request.headers["webhook-id"] == delivery["id"]
    assert verify(created["secret"], request)
    assert _value(_samples(api), PENDING) == 0


def test_410_gone_shows_the_subscription_disabled(api: Api) -> None:
    with running_receiver(default=410) as gone:
        created = subscribe(api, {"url": gone.url}).json()
        enqueue(api, 1)

        def disabled() -> dict[str, Any] | None:
            [item] = get(api, "/v1/webhooks").json()["items"]
            return item if item["state"] == "disabled" else None

        subscription = wait_until(disabled, "the subscription to be disabled")
    assert subscription["disabled_reason"] == "the receiver answered 410 Gone"
    assert subscription["disabled_at"] is not None
    [delivery] = get(api, f"/v1/webhooks/{created['id']}/deliveries").json()["items"]
    assert (delivery["status"], delivery["last_status_code"]) == ("failed", 410)
    assert enqueue(api, 2) == 0


def test_pending_deliveries_are_counted_and_paged(api: Api, receiver: Receiver) -> None:
    api.runtime.webhooks.dispatcher.stop()  # nothing is sent until it starts again
    created = subscribe(api, {"url": receiver.url}).json()
    assert enqueue(api, 1, 2, 3) == 3
    assert _value(_samples(api), PENDING) == 3
    [listed] = get(api, "/v1/webhooks").json()["items"]
    assert listed["pending_deliveries"] == 3

    path = f"/v1/webhooks/{created['id']}/deliveries"
    first = get(api, path, limit=2).json()
    assert [item["alert_id"] for item in first["items"]] == ["alert-3", "alert-2"]
    assert all(item["status"] == "pending" for item in first["items"])
    assert all(item["attempts"] == [] for item in first["items"])
    second = get(api, path, limit=2, cursor=first["next_cursor"]).json()
    assert ([item["alert_id"] for item in second["items"]], second["next_cursor"]) == (
        ["alert-1"],
        None,
    )
    assert get(api, path, status="delivered").json()["items"] == []

    api.runtime.webhooks.dispatcher.start()
    wait_until(lambda: _value(_samples(api), PENDING) == 0, "every delivery to be sent")
    assert len(get(api, path, status="delivered").json()["items"]) == 3
    assert len(receiver.received()) == 3


@pytest.mark.parametrize(
    ("params", "field"),
    [({"cursor": "nope"}, "cursor"), ({"status": "lost"}, "status"), ({"limit": 0}, "limit")],
)
def test_bad_delivery_log_queries_are_a_400(api: Api, params: dict[str, Any], field: str) -> None:
    created = subscribe(api, {"url": "https://hooks.example.com/a"}).json()
    response = get(api, f"/v1/webhooks/{created['id']}/deliveries", **params)
    assert response.status_code == 400, response.text
    assert named(response.json()) == field


def test_a_verdict_change_reaches_the_receiver_as_its_alert(api: Api, receiver: Receiver) -> None:
    subscription = subscribe(api, {"url": receiver.url}).json()
    created(api, hardware("pool-a"))
    created(api, hardware("pool-a", python="3.10.4"))  # experimental -> rejected: an alert
    [listed] = get(api, "/v1/alerts", role="procurement").json()["items"]

    [request] = wait_until(receiver.received, "the alert's delivery")
    assert verify(subscription["secret"], request)
    assert json.loads(request.body) == {
        "type": "verdict.changed",
        "timestamp": listed["at"],
        "data": listed,
    }
