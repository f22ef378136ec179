"""webhook_subscriptions, webhook_deliveries (the outbox) and webhook_attempts rows.

Lock order, everywhere: a subscription before its deliveries (no deadlock between recording
an attempt, disabling a subscription and deleting one on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlmodel import Session

from supportgate.db import table_of
from supportgate.db.engine import conflict_insert
from supportgate.db.tables import WebhookAttempt, WebhookDelivery, WebhookSubscription

_subscriptions = table_of(WebhookSubscription)
_deliveries = table_of(WebhookDelivery)
_attempts = table_of(WebhookAttempt)


@dataclass(frozen=True, slots=True)
class Claimed:
    seq: int
    attempt: int
    message_id: str
    subscription_id: str
    url: str
    secret: str
    payload: str


# Subscriptions


def active_subscription_ids(session: Session) -> list[str]:
    statement = (
        select(_subscriptions.c.id)
        .where(_subscriptions.c.state == "active")
        .order_by(_subscriptions.c.id)
    )
    return list(session.execute(statement).scalars())


def all_subscriptions(session: Session) -> Sequence[WebhookSubscription]:
    statement = select(WebhookSubscription).order_by(
        _subscriptions.c.created_at, _subscriptions.c.id
    )
    return session.execute(statement).scalars().all()


def subscription(
    session: Session, subscription_id: str, *, lock: bool = False
) -> WebhookSubscription | None:
    """One subscription; `lock` takes its row lock (FOR NO KEY UPDATE: enqueues still pass)."""
    statement = select(WebhookSubscription).where(_subscriptions.c.id == subscription_id)
    if lock:
        statement = statement.with_for_update(key_share=True)
    return session.execute(statement).scalars().first()


def delete_subscription(session: Session, subscription_id: str) -> bool:
    locked = session.execute(
        select(_subscriptions.c.id).where(_subscriptions.c.id == subscription_id).with_for_update()
    ).first()
    if locked is None:
        return False
    seqs = select(_deliveries.c.seq).where(_deliveries.c.subscription_id == subscription_id)
    session.execute(delete(_attempts).where(_attempts.c.delivery_seq.in_(seqs)))
    session.execute(delete(_deliveries).where(_deliveries.c.subscription_id == subscription_id))
    session.execute(delete(_subscriptions).where(_subscriptions.c.id == subscription_id))
    return True


def pending_counts(session: Session) -> dict[str, int]:
    statement = (
        select(_deliveries.c.subscription_id, func.count())
        .where(_deliveries.c.status == "pending")
        .group_by(_deliveries.c.subscription_id)
    )
    return {subscription_id: int(count) for subscription_id, count in session.execute(statement)}


# The outbox


def insert_deliveries(session: Session, rows: list[dict[str, Any]]) -> int:
    statement = (
        conflict_insert(session, _deliveries)
        .on_conflict_do_nothing(index_elements=["subscription_id", "alert_id"])
        .returning(_deliveries.c.seq)
    )
    return len(session.execute(statement, rows).all())


def any_due(session: Session, *, now: datetime) -> bool:
    """Whether a delivery is due: a read, so an idle poll takes no write lock."""
    statement = (
        select(_deliveries.c.seq)
        .where(_deliveries.c.status == "pending", _deliveries.c.next_attempt_at <= now)
        .limit(1)
    )
    return session.execute(statement).first() is not None


def claim_due(
    session: Session, *, now: datetime, lease_until: datetime, limit: int
) -> list[Claimed]:
    """Each claim counts one more attempt (its fencing token) and moves `next_attempt_at` to
    `lease_until`, so a claim whose dispatcher died becomes due again then. SQLite has one
    writer at a time, so SKIP LOCKED matters on PostgreSQL only."""
    statement = (
        select(
            _deliveries.c.seq,
            (_deliveries.c.attempts + 1).label("attempt"),
            _deliveries.c.message_id,
            _deliveries.c.subscription_id,
            _deliveries.c.payload,
            _subscriptions.c.url,
            _subscriptions.c.secret,
        )
        .join(_subscriptions, _subscriptions.c.id == _deliveries.c.subscription_id)
        .where(
            _deliveries.c.status == "pending",
            _deliveries.c.next_attempt_at <= now,
            _subscriptions.c.state == "active",
        )
        .order_by(_deliveries.c.next_attempt_at, _deliveries.c.seq)
        .limit(limit)
        .with_for_update(of=_deliveries, skip_locked=True)
    )
    rows = session.execute(statement).all()
    if not rows:
        return []
    session.execute(
        update(_deliveries)
        .where(_deliveries.c.seq.in_([row.seq for row in rows]))
        .values(attempts=_deliveries.c.attempts + 1, next_attempt_at=lease_until)
    )
    return [Claimed(**row._mapping) for row in rows]


def delivery(session: Session, seq: int, *, lock: bool = False) -> WebhookDelivery | None:
    statement = select(WebhookDelivery).where(_deliveries.c.seq == seq)
    if lock:
        statement = statement.with_for_update()
    return session.execute(statement).scalars().first()


def cancel_pending(session: Session, subscription_id: str, *, now: datetime, reason: str) -> int:
    result = session.execute(
        update(_deliveries)
        .where(_deliveries.c.subscription_id == subscription_id, _deliveries.c.status == "pending")
        .values(status="cancelled", finished_at=now, last_error=reason)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


# The delivery log


def deliveries_page(
    session: Session,
    subscription_id: str,
    *,
    status: str | None,
    before_seq: int | None,
    limit: int,
) -> Sequence[WebhookDelivery]:
    statement = select(WebhookDelivery).where(_deliveries.c.subscription_id == subscription_id)
    if status is not None:
        statement = statement.where(_deliveries.c.status == status)
    if before_seq is not None:
        statement = statement.where(_deliveries.c.seq < before_seq)
    statement = statement.order_by(_deliveries.c.seq.desc()).limit(limit)
    return session.execute(statement).scalars().all()


def attempts_of(session: Session, seqs: list[int]) -> dict[int, list[WebhookAttempt]]:
    found: dict[int, list[WebhookAttempt]] = {seq: [] for seq in seqs}
    if not seqs:
        return found
    statement = (
        select(WebhookAttempt)
        .where(_attempts.c.delivery_seq.in_(seqs))
        .order_by(_attempts.c.delivery_seq, _attempts.c.attempt)
    )
    for row in session.execute(statement).scalars():
        found[row.delivery_seq].append(row)
    return found
