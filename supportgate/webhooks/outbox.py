"""The outbox: deliveries written in the transaction of what they tell.

Three event types (docs/webhooks.md): `verdict.changed`, an alert; `matrix.sync_failed`, a sync
of the matrix source that published nothing (supportgate/matrix_sources/ enqueues it with
`enqueue_event_deliveries`, in the transaction that records the failure);
`policy.reload_failed`, changed policy files refused (services.py, on PolicyReloadFailed).

`enqueue_alert_deliveries` is a step of the ledger's transaction that records the alerts
(supportgate/ledger/write.py), so a delivery exists if and only if its alert does; the
dispatcher sends it later (at least once). The write's DeliveriesEnqueued event wakes the
dispatcher once the transaction has committed (supportgate/runtime.py), so a delivery goes
out at once instead of at the next poll.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlmodel

from supportgate.db.engine import json_text

from . import repository

EVENT_TYPE = "verdict.changed"
SYNC_FAILED = "matrix.sync_failed"
POLICY_RELOAD_FAILED = "policy.reload_failed"


def enqueue_alert_deliveries(
    session: sqlmodel.Session, alerts: Sequence[Mapping[str, Any]], now: datetime
) -> int:
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
    rows = [
        _delivery(subscription_id, alert, now)
        for alert in alerts
        for subscription_id in subscription_ids
    ]
    return repository.insert_deliveries(session, rows)


def enqueue_event_deliveries(
    session: sqlmodel.Session,
    *,
    event_type: str,
    event_id: str,
    at: str,
    data: Mapping[str, Any],
    now: datetime,
) -> int:
    """One outbox row per active subscription for an event that is no alert: `event_id` takes
    the place of the alert's id (the deliveries' `alert_id`), `at` (RFC 3339) is the event's
    `timestamp`. Returns the number of rows written."""
    subscription_ids = repository.active_subscription_ids(session)
    body = json_text({"type": event_type, "timestamp": at, "data": dict(data)})
    rows = [_row(subscription_id, event_id, body, now) for subscription_id in subscription_ids]
    return repository.insert_deliveries(session, rows) if rows else 0


def message_id(subscription_id: str, alert_id: str) -> str:
    """The `webhook-id` of an alert's delivery to a subscription: the same on every attempt
    (and for every enqueue of the same pair); no `.`, as the spec asks."""
    digest = hashlib.sha256(f"{subscription_id}\n{alert_id}".encode()).hexdigest()
    return f"msg_{digest[:32]}"


def payload(alert: Mapping[str, Any]) -> str:
    return json_text({"type": EVENT_TYPE, "timestamp": alert["at"], "data": dict(alert)})


def _delivery(subscription_id: str, alert: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    for key in ("id", "at"):
        if alert.get(key) is None:
            raise ValueError(f"an alert to deliver needs `{key}`: {dict(alert)!r}")
    return _row(subscription_id, str(alert["id"]), payload(alert), now)


def _row(subscription_id: str, alert_id: str, body: str, now: datetime) -> dict[str, Any]:
    return {
        "message_id": message_id(subscription_id, alert_id),
        "subscription_id": subscription_id,
        "alert_id": alert_id,
        "payload": body,
        "status": "pending",
        "attempts": 0,
        "next_attempt_at": now,
        "created_at": now,
    }
