"""The outbox: alert deliveries written in the alert's own transaction.

The alerts domain calls `enqueue_alert_deliveries` in the transaction that records its
alerts, so a delivery exists if and only if its alert does; the dispatcher sends it later (at
least once). After that transaction commits, the dispatchers of this process are woken, so
a delivery goes out at once instead of at the next poll.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

import sqlmodel
from sqlalchemy import event

from supportgate.db.engine import json_text

from . import repository

EVENT_TYPE = "verdict.changed"


class Wakeable(Protocol):
    def wake(self) -> None: ...


_wakeable: weakref.WeakSet[Any] = weakref.WeakSet()
_wakeable_lock = threading.Lock()


def wake_on_enqueue(target: Wakeable) -> None:
    """Have `target.wake()` called after every commit that enqueued deliveries."""
    with _wakeable_lock:
        _wakeable.add(target)


def stop_waking(target: Wakeable) -> None:
    with _wakeable_lock:
        _wakeable.discard(target)


def enqueue_alert_deliveries(session: sqlmodel.Session, alerts: Sequence[Mapping[str, Any]]) -> int:
    """One outbox row per (active subscription, alert), in `session`'s transaction.

    Each alert is a GET /v1/alerts item (`id`, `manifest`, `from`, `to`, `cause`,
    `matrix_version`, `at`, `decision_id`); it becomes the `data` of a `verdict.changed`
    event. An (alert, subscription) pair already in the outbox is left alone. Returns the
    number of rows written.
    """
    if not alerts:
        return 0
    subscription_ids = repository.active_subscription_ids(session)
    if not subscription_ids:
        return 0
    now = datetime.now(UTC)
    rows = [
        _delivery(subscription_id, alert, now)
        for alert in alerts
        for subscription_id in subscription_ids
    ]
    written = repository.insert_deliveries(session, rows)
    if written:
        event.listen(session, "after_commit", _wake_dispatchers, once=True)
    return written


def message_id(subscription_id: str, alert_id: str) -> str:
    """The `webhook-id` of an alert's delivery to a subscription: the same on every attempt
    (and for every enqueue of the same pair); no `.`, as the spec asks."""
    digest = hashlib.sha256(f"{subscription_id}\n{alert_id}".encode()).hexdigest()
    return f"msg_{digest[:32]}"


def payload(alert: Mapping[str, Any]) -> str:
    """The body sent for an alert: a Standard Webhooks event, as compact JSON."""
    return json_text({"type": EVENT_TYPE, "timestamp": alert["at"], "data": dict(alert)})


def _delivery(subscription_id: str, alert: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    for key in ("id", "at"):
        if alert.get(key) is None:
            raise ValueError(f"an alert to deliver needs `{key}`: {dict(alert)!r}")
    alert_id = str(alert["id"])
    return {
        "message_id": message_id(subscription_id, alert_id),
        "subscription_id": subscription_id,
        "alert_id": alert_id,
        "payload": payload(alert),
        "status": "pending",
        "attempts": 0,
        "next_attempt_at": now,
        "created_at": now,
    }


def _wake_dispatchers(_session: Any) -> None:
    with _wakeable_lock:
        targets = list(_wakeable)
    for target in targets:
        target.wake()
