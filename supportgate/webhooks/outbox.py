"""The outbox: deliveries written in the transaction of what they tell, so a delivery exists if
and only if its alert (or other event) does (docs/webhooks.md, Delivery)."""

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
    """A pair (alert, subscription) already there is left alone. Each alert, a GET /v1/alerts
    item, is the `data` of a `verdict.changed` event."""
    bodies = [(str(alert["id"]), _body(EVENT_TYPE, alert["at"], alert)) for alert in alerts]
    return _enqueue(session, bodies, now)


def enqueue_event_deliveries(
    session: sqlmodel.Session,
    *,
    event_type: str,
    event_id: str,
    at: str,
    data: Mapping[str, Any],
    now: datetime,
) -> int:
    """An event that is no alert: `event_id` takes the place of the deliveries' `alert_id`."""
    return _enqueue(session, [(event_id, _body(event_type, at, data))], now)


def _enqueue(session: sqlmodel.Session, bodies: list[tuple[str, str]], now: datetime) -> int:
    if not bodies:
        return 0
    subscription_ids = repository.active_subscription_ids(session)
    rows = [_row(sub, event_id, body, now) for event_id, body in bodies for sub in subscription_ids]
    return repository.insert_deliveries(session, rows) if rows else 0


def message_id(subscription_id: str, alert_id: str) -> str:
    """The `webhook-id` of an alert's delivery to a subscription: the same on every attempt
    (and for every enqueue of the same pair); no `.`, as the spec asks."""
    digest = hashlib.sha256(f"{subscription_id}\n{alert_id}".encode()).hexdigest()
    return f"msg_{digest[:32]}"


def _body(event_type: str, at: Any, data: Mapping[str, Any]) -> str:
    return json_text({"type": event_type, "timestamp": at, "data": dict(data)})


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
