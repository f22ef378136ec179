"""The dispatcher: a background thread that sends due outbox rows, at least once; no
transaction is open while a request is in flight (claims and crashes: docs/webhooks.md).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate import __version__
from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import transaction
from supportgate.db.tables import WebhookAttempt, WebhookDelivery, WebhookSubscription
from supportgate.logging import get_logger

from . import repository, signing
from .posting import DeadlinePassed, post
from .repository import Claimed
from .retries import HTTP_GONE, DeliveryPolicy, retry_after_seconds, succeeded
from .targets import AllowList, TargetRefused

log = get_logger(__name__)
USER_AGENT = f"supportgate-webhooks/{__version__}"
MAX_ERROR_CHARS = 500


@dataclass(frozen=True, slots=True)
class Outcome:
    at: datetime
    duration_ms: float
    status_code: int | None = None
    error: str | None = None
    retry_after: float | None = None


class WebhookDispatcher:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        policy: DeliveryPolicy | None = None,
        clock: Clock = SYSTEM_CLOCK,
        allow: AllowList | None = None,
    ) -> None:
        self._sessions = sessions
        self.policy = policy or DeliveryPolicy()
        self._clock = clock
        self._allow = allow or AllowList()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._client: httpx.Client | None = None
        self._in_flight: set[Future[None]] = set()
        self._lock = threading.Lock()

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stopping.clear()
        self._client = httpx.Client(
            timeout=self.policy.request_timeout,
            limits=httpx.Limits(max_keepalive_connections=0),  # a socket per attempt: posting.py
            follow_redirects=False,
            headers={"user-agent": USER_AGENT},
        )
        self._pool = ThreadPoolExecutor(self.policy.concurrency, thread_name_prefix="webhook")
        self._thread = threading.Thread(target=self._run, name="webhook-dispatcher", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop claiming; let the attempts in flight finish and be recorded."""
        if self._thread is None:
            return
        self._stopping.set()
        self._wake.set()
        self._thread.join()
        self._thread = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.clear()
            try:
                self._claim_and_send()
            except DBAPIError as exc:  # the database is away: try again at the next poll
                log.warning("webhook_claim_failed", error=type(exc.orig).__name__)
            except Exception:  # a bug must not end deliveries for good; it is logged
                log.exception("webhook_dispatch_failed")
            self._wake.wait(self.policy.poll_interval)

    def _claim_and_send(self) -> None:
        with self._lock:
            free = self.policy.concurrency - len(self._in_flight)
        if free <= 0:
            return
        now = self._clock.now()
        with transaction(self._sessions) as session:
            if not repository.any_due(session, now=now):
                return
        lease_until = now + timedelta(seconds=self.policy.lease_seconds)
        with transaction(self._sessions, write=True) as session:
            claimed = repository.claim_due(session, now=now, lease_until=lease_until, limit=free)
        pool = self._pool
        if pool is None:  # stopped meanwhile: the claims run out and are retried
            return
        for claim in claimed:
            future = pool.submit(self._deliver, claim)
            with self._lock:
                self._in_flight.add(future)
            future.add_done_callback(self._finished)
        if len(claimed) == free:  # there may be more due
            self._wake.set()

    def _finished(self, future: Future[None]) -> None:
        with self._lock:
            self._in_flight.discard(future)
        error = future.exception()
        if error is not None:  # unrecorded: the claim runs out and the attempt is retried
            log.error("webhook_delivery_crashed", exc_info=error)
        self._wake.set()

    def _deliver(self, claim: Claimed) -> None:
        client = self._client
        if client is None:
            raise RuntimeError("the webhook dispatcher is not started")
        outcome = send(client, claim, self._clock.now(), self.policy, self._allow)
        try:
            record(self._sessions, self.policy, claim, outcome, now=self._clock.now())
        except DBAPIError as exc:  # unrecorded: the claim runs out and the attempt is retried
            log.warning(
                "webhook_attempt_unrecorded",
                message_id=claim.message_id,
                attempt=claim.attempt,
                error=type(exc.orig).__name__,
            )


def send(
    client: httpx.Client, claim: Claimed, at: datetime, policy: DeliveryPolicy, allow: AllowList
) -> Outcome:
    """POST the signed payload; the status code, or the error that stood in for one."""
    body = claim.payload.encode()
    headers = {
        "content-type": "application/json",
        **signing.headers(claim.secret, claim.message_id, int(at.timestamp()), body),
    }
    started = time.perf_counter()
    deadline = policy.attempt_deadline
    try:
        answer = post(client, claim.url, body=body, headers=headers, allow=allow, deadline=deadline)
    except httpx.TimeoutException:
        error = f"timed out after {policy.request_timeout:g} s"
    # ValueError: an IDNA host
    except (DeadlinePassed, TargetRefused, httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
        error = f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]
    else:
        retry_after = retry_after_seconds(answer.retry_after)
        return Outcome(at, _since(started), answer.status_code, retry_after=retry_after)
    return Outcome(at, _since(started), error=error)


def record(
    sessions: sessionmaker[Session],
    policy: DeliveryPolicy,
    claim: Claimed,
    outcome: Outcome,
    *,
    now: datetime,
) -> None:
    """Log the attempt and move the delivery and its subscription on (see retries.py)."""
    with transaction(sessions, write=True) as session:
        subscription = repository.subscription(session, claim.subscription_id, lock=True)
        delivery = repository.delivery(session, claim.seq, lock=True)
        if subscription is None or delivery is None:  # deleted while the attempt was made
            return
        session.add(
            WebhookAttempt(
                delivery_seq=claim.seq,
                attempt=claim.attempt,
                at=outcome.at,
                duration_ms=round(outcome.duration_ms, 3),
                status_code=outcome.status_code,
                error=outcome.error,
            )
        )
        # A claim that ran out and was taken again is only logged: the newer claim decides.
        current = delivery.status == "pending" and delivery.attempts == claim.attempt
        ok = succeeded(outcome.status_code)
        if current:
            delivery.last_status_code, delivery.last_error = outcome.status_code, outcome.error
        if ok:
            subscription.consecutive_failures, subscription.first_failure_at = 0, None
            # cancelled (its subscription disabled) while this attempt was in flight: it arrived
            if delivery.attempts == claim.attempt and delivery.status in {"pending", "cancelled"}:
                delivery.status, delivery.finished_at = "delivered", now
                delivery.last_status_code, delivery.last_error = outcome.status_code, None
        else:
            _failed(
                session,
                policy,
                subscription=subscription,
                delivery=delivery,
                claim=claim,
                outcome=outcome,
                current=current,
                now=now,
            )
    log.info(
        "webhook_attempt",
        subscription=claim.subscription_id,
        message_id=claim.message_id,
        attempt=claim.attempt,
        status_code=outcome.status_code,
        error=outcome.error,
        duration_ms=round(outcome.duration_ms, 1),
        delivered=ok,
    )


def _failed(
    session: Session,
    policy: DeliveryPolicy,
    *,
    subscription: WebhookSubscription,
    delivery: WebhookDelivery,
    claim: Claimed,
    outcome: Outcome,
    current: bool,
    now: datetime,
) -> None:
    subscription.consecutive_failures += 1
    subscription.first_failure_at = subscription.first_failure_at or outcome.at
    if current:
        if outcome.status_code == HTTP_GONE or claim.attempt >= policy.max_attempts:
            delivery.status, delivery.finished_at = "failed", now
        else:
            delay = policy.retry_delay(claim.attempt, outcome.retry_after)
            delivery.next_attempt_at = now + timedelta(seconds=delay)
    failing_for = (now - subscription.first_failure_at).total_seconds()
    if outcome.status_code == HTTP_GONE:
        reason = "the receiver answered 410 Gone"
    elif (
        subscription.consecutive_failures >= policy.disable_after_failures
        and failing_for >= policy.disable_after_seconds
    ):
        reason = f"{subscription.consecutive_failures} consecutive failed attempts"
    else:
        return
    if subscription.state == "active":
        subscription.state, subscription.disabled_at = "disabled", now
        subscription.disabled_reason = reason
        session.flush()
        cancelled = repository.cancel_pending(
            session, subscription.id, now=now, reason=f"subscription disabled: {reason}"
        )
        log.warning(
            "webhook_subscription_disabled",
            subscription=subscription.id,
            url=subscription.url,
            reason=reason,
            cancelled=cancelled,
        )


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
