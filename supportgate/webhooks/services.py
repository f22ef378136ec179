"""Webhook subscriptions: create (with a new secret), list, delete, the delivery log; and the
dispatcher (`dispatcher`), which the runtime starts and stops."""

from __future__ import annotations

import re
import string
from urllib.parse import urlsplit
from uuid import uuid4

import httpx
import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import transaction
from supportgate.db.tables import (
    DELIVERY_STATUSES,
    WebhookAttempt,
    WebhookDelivery,
    WebhookSubscription,
)
from supportgate.errors import UsageError
from supportgate.events import PolicyReloadFailed
from supportgate.logging import get_logger
from supportgate.pagination import check_choice, check_limit, decode_cursor, trim_page
from supportgate.threads import thread_twin

from . import repository, signing
from .dispatcher import WebhookDispatcher
from .outbox import POLICY_RELOAD_FAILED, enqueue_event_deliveries
from .retries import DeliveryPolicy
from .targets import AllowList, TargetRefused, check_subscription_host
from .views import (
    URL_PATTERN,
    Delivery,
    DeliveryPage,
    Webhook,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
)

log = get_logger(__name__)
SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_URL = re.compile(URL_PATTERN)
_UNSAFE = frozenset(string.whitespace) | {chr(code) for code in range(32)} | {"\x7f"}


class WebhookService:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        policy: DeliveryPolicy | None = None,
        clock: Clock = SYSTEM_CLOCK,
        allow: AllowList | None = None,
    ) -> None:
        self._sessions = sessions
        self._clock = clock
        self._allow = allow or AllowList()
        self.dispatcher = WebhookDispatcher(sessions, policy=policy, clock=clock, allow=allow)

    def policy_reload_failed(self, failed: PolicyReloadFailed) -> None:
        """The policies' reload is no write of the ledger: its deliveries are written here."""
        now = self._clock.now()
        data = msgspec.to_builtins(failed)
        data.pop("event")
        with transaction(self._sessions, write=True) as session:
            enqueued = enqueue_event_deliveries(
                session,
                event_type=POLICY_RELOAD_FAILED,
                event_id=f"policy_{uuid4()}",
                at=data.pop("at"),
                data=data,
                now=now,
            )
        if enqueued:
            self.dispatcher.wake()

    def create(self, request: WebhookCreate, *, created_by: str | None) -> WebhookCreated:
        url = check_url(request.url, self._allow)
        row = WebhookSubscription(
            id=str(uuid4()),
            url=url,
            description=request.description,
            secret=signing.new_secret(),
            state="active",
            created_at=self._clock.now(),
            created_by=created_by,
        )
        with transaction(self._sessions, write=True) as session:
            session.add(row)
        log.info("webhook_subscribed", subscription=row.id, url=url, created_by=created_by)
        return WebhookCreated(**msgspec.structs.asdict(_view(row, 0)), secret=row.secret)

    create_in_thread = thread_twin(create)

    def subscriptions(self) -> WebhookList:
        with transaction(self._sessions) as session:
            rows = repository.all_subscriptions(session)
            pending = repository.pending_counts(session)
        return WebhookList(items=[_view(row, pending.get(row.id, 0)) for row in rows])

    subscriptions_in_thread = thread_twin(subscriptions)

    def delete(self, subscription_id: str) -> bool:
        with transaction(self._sessions, write=True) as session:
            deleted = repository.delete_subscription(session, subscription_id)
        if deleted:
            log.info("webhook_deleted", subscription=subscription_id)
        return deleted

    delete_in_thread = thread_twin(delete)

    def deliveries(
        self, subscription_id: str, *, status: str | None, cursor: str | None, limit: int
    ) -> DeliveryPage | None:
        """A subscription's deliveries with their attempts, newest first; None: no such one."""
        check_choice("status", status, DELIVERY_STATUSES)
        before = decode_cursor(cursor, int)[0] if cursor else None
        limit = check_limit(limit)
        with transaction(self._sessions) as session:
            if repository.subscription(session, subscription_id) is None:
                return None
            rows = repository.deliveries_page(
                session, subscription_id, status=status, before_seq=before, limit=limit + 1
            )
            rows, next_cursor = trim_page(rows, limit, lambda row: [row.seq])
            attempts = repository.attempts_of(session, [row.seq for row in rows if row.seq])
        items = [_delivery(row, attempts.get(row.seq or 0, [])) for row in rows]
        return DeliveryPage(items=items, next_cursor=next_cursor)

    deliveries_in_thread = thread_twin(deliveries)


def check_url(url: str, allow: AllowList) -> str:
    if any(char in _UNSAFE for char in url):
        raise UsageError("must not contain spaces or control characters", field="$.url")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UsageError(f"not a valid URL ({exc})", field="$.url") from exc
    if parts.scheme.lower() not in SCHEMES:
        raise UsageError(
            f"must be an http or https URL, got scheme {parts.scheme!r}", field="$.url"
        )
    if not parts.hostname:
        raise UsageError("must name a host", field="$.url")
    if port == 0:
        raise UsageError("port 0 cannot be reached", field="$.url")
    if "@" in parts.netloc:
        raise UsageError(
            "must not carry user:password@ credentials (put a token in the path or the "
            "query, or verify the signature: docs/webhooks.md)",
            field="$.url",
        )
    try:
        httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise UsageError(f"not a valid URL ({exc})", field="$.url") from exc
    if not _URL.match(url):
        raise UsageError(
            "must be http(s)://host[:port][/path] with a DNS name, an IPv4 or an [IPv6]"
            " address as the host, in printable ASCII",
            field="$.url",
        )
    try:
        check_subscription_host(parts.hostname, port or _DEFAULT_PORTS[parts.scheme.lower()], allow)
    except TargetRefused as exc:
        raise UsageError(str(exc), field="$.url") from exc
    return url


def _view(row: WebhookSubscription, pending: int) -> Webhook:
    return msgspec.convert({**row.model_dump(), "pending_deliveries": pending}, Webhook)


def _delivery(row: WebhookDelivery, attempts: list[WebhookAttempt]) -> Delivery:
    values = {**row.model_dump(), "id": row.message_id, "attempts": attempts}
    if row.status != "pending":
        values["next_attempt_at"] = None
    return msgspec.convert(values, Delivery, from_attributes=True)
