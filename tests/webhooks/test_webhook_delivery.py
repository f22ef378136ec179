"""Webhook delivery against a real receiver on a loopback port, on SQLite and PostgreSQL:
signed per the Standard Webhooks spec, retried with backoff through 500s and timeouts until
it recovers, given up, disabled (410, repeated failures), and at least once across a
dispatcher that died mid-attempt or two dispatchers on one database."""

from __future__ import annotations

import ipaddress
import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import transaction
from supportgate.db.tables import WebhookSubscription
from supportgate.webhooks import repository, targets
from supportgate.webhooks.dispatcher import Outcome, WebhookDispatcher, record
from supportgate.webhooks.outbox import enqueue_alert_deliveries
from supportgate.webhooks.retries import DeliveryPolicy
from supportgate.webhooks.services import WebhookService
from supportgate.webhooks.targets import AllowList
from supportgate.webhooks.views import Delivery, WebhookCreate, WebhookCreated

from ..receiver import ALLOW, HANG, TRICKLE, Receiver, running_receiver, verify
from ..waiting import wait_until

FAST = DeliveryPolicy(
    poll_interval=0.05,
    request_timeout=3.0,
    attempt_deadline=5.0,
    lease_seconds=10.0,
    base_delay=0.01,
    max_delay=0.05,
    max_attempts=5,
    disable_after_failures=100,
    disable_after_seconds=0.0,
)


def alert(number: int) -> dict[str, Any]:
    """An alert as GET /v1/alerts gives it."""
    return {
        "id": f"alert-{number}",
        "manifest": {"kind": "DeploymentManifest", "name": f"trial-{number}"},
        "from": "experimental",
        "to": "rejected",
        "cause": "matrix",
        "matrix_version": "2026.12.1",
        "at": datetime(2026, 11, 30, 12, 0, number, tzinfo=UTC),
        "decision_id": f"decision-{number}",
    }


RECEIVERS = AllowList.parse(ALLOW)


class Harness:
    def __init__(self, sessions: sessionmaker[Session], policy: DeliveryPolicy) -> None:
        self.sessions = sessions
        self.service = WebhookService(sessions, policy=policy, allow=RECEIVERS)
        self.dispatchers: list[WebhookDispatcher] = []

    def subscribe(self, url: str) -> WebhookCreated:
        return self.service.create(WebhookCreate(url=url), created_by="test")

    def enqueue(self, *numbers: int) -> int:
        with transaction(self.sessions, write=True) as session:
            return enqueue_alert_deliveries(session, [alert(n) for n in numbers], datetime.now(UTC))

    def start(
        self, policy: DeliveryPolicy = FAST, allow: AllowList = RECEIVERS
    ) -> WebhookDispatcher:
        dispatcher = WebhookDispatcher(self.sessions, policy=policy, allow=allow)
        self.dispatchers.append(dispatcher)
        dispatcher.start()
        return dispatcher

    def deliveries(self, subscription_id: str) -> list[Delivery]:
        page = self.service.deliveries(subscription_id, status=None, cursor=None, limit=500)
        assert page is not None
        return page.items

    def settled(self, subscription_id: str, count: int) -> list[Delivery]:
        """Wait until `count` deliveries exist and none is pending; oldest first."""

        def done() -> list[Delivery] | None:
            found = self.deliveries(subscription_id)
            finished = len(found) == count and all(d.status != "pending" for d in found)
            return list(reversed(found)) if finished else None

        return wait_until(done, f"{count} settled deliveries")

    def subscription(self, subscription_id: str) -> Any:
        return next(s for s in self.service.subscriptions().items if s.id == subscription_id)


@pytest.fixture
def harness(sessions: sessionmaker[Session]) -> Iterator[Harness]:
    running = Harness(sessions, FAST)
    try:
        yield running
    finally:
        for dispatcher in running.dispatchers:
            dispatcher.stop()


def outcomes(delivery: Delivery) -> list[int | str | None]:
    return [a.status_code or (a.error and a.error.split(" ")[0]) for a in delivery.attempts]


def test_a_delivery_is_signed_and_carries_the_alert(harness: Harness, receiver: Receiver) -> None:
    created = harness.subscribe(receiver.url)
    assert harness.enqueue(1) == 1
    started = int(time.time())
    harness.start()
    [delivery] = harness.settled(created.id, 1)
    settled = time.time()

    assert delivery.status == "delivered"
    assert outcomes(delivery) == [200]
    [request] = receiver.received()
    assert verify(created.secret, request)
    assert request.headers["webhook-id"] == delivery.id
    assert request.headers["content-type"] == "application/json"
    assert started <= int(request.headers["webhook-timestamp"]) <= settled  # when it was sent
    assert json.loads(request.body) == {
        "type": "verdict.changed",
        "timestamp": "2026-11-30T12:00:01Z",
        "data": {**alert(1), "at": "2026-11-30T12:00:01Z"},
    }
    assert not verify(created.secret, replace(request, body=request.body + b" "))
    assert harness.subscription(created.id).consecutive_failures == 0


def test_failures_and_timeouts_are_retried_until_the_receiver_recovers(
    harness: Harness, receiver: Receiver
) -> None:
    created = harness.subscribe(receiver.url)
    receiver.script(500, HANG, 503, 200)
    harness.enqueue(1)
    harness.start()
    [delivery] = harness.settled(created.id, 1)

    assert delivery.status == "delivered"
    assert outcomes(delivery) == [500, "timed", 503, 200]
    assert delivery.attempts[1].error == "timed out after 3 s"
    assert [a.attempt for a in delivery.attempts] == [1, 2, 3, 4]
    assert all(a.duration_ms >= 0 for a in delivery.attempts)
    requests = receiver.received()
    assert len(requests) == 4
    assert {r.headers["webhook-id"] for r in requests} == {delivery.id}  # stable across retries
    assert all(verify(created.secret, r) for r in requests)
    assert len({r.body for r in requests}) == 1
    assert harness.subscription(created.id).consecutive_failures == 0


def test_a_delivery_is_given_up_after_max_attempts(
    harness: Harness, receiver: Receiver, sessions: sessionmaker[Session]
) -> None:
    created = harness.subscribe(receiver.url)
    receiver.script(500, 500)
    harness.enqueue(1)
    harness.start(replace(FAST, max_attempts=2))
    [delivery] = harness.settled(created.id, 1)
    assert delivery.status == "failed"
    assert outcomes(delivery) == [500, 500]
    assert delivery.last_status_code == 500
    subscription = harness.subscription(created.id)
    assert (subscription.state, subscription.consecutive_failures) == ("active", 2)

    harness.enqueue(2)  # still subscribed; a success resets the failure count
    delivered = harness.settled(created.id, 2)[1]
    assert delivered.status == "delivered"
    assert harness.subscription(created.id).consecutive_failures == 0


def test_410_gone_disables_the_subscription(harness: Harness, receiver: Receiver) -> None:
    with running_receiver(default=410) as gone:
        created = harness.subscribe(gone.url)
        other = harness.subscribe(receiver.url)
        harness.enqueue(1)
        harness.start()
        wait_until(lambda: harness.subscription(created.id).state == "disabled", "disabled")

    subscription = harness.subscription(created.id)
    assert subscription.disabled_reason == "the receiver answered 410 Gone"
    [delivery] = harness.settled(created.id, 1)
    assert (delivery.status, outcomes(delivery)) == ("failed", [410])
    assert harness.settled(other.id, 1)[0].status == "delivered"
    assert harness.enqueue(2) == 1  # only the active subscription gets new alerts


def test_repeated_failures_disable_the_subscription_and_cancel_its_deliveries(
    harness: Harness, sessions: sessionmaker[Session]
) -> None:
    with running_receiver(default=500) as failing:
        created = harness.subscribe(failing.url)
        harness.enqueue(1, 2)
        harness.start(replace(FAST, disable_after_failures=3, max_attempts=50, concurrency=1))
        wait_until(lambda: harness.subscription(created.id).state == "disabled", "disabled")

    subscription = harness.subscription(created.id)
    assert subscription.disabled_reason == "3 consecutive failed attempts"
    assert subscription.pending_deliveries == 0
    deliveries = harness.settled(created.id, 2)
    assert sum(len(d.attempts) for d in deliveries) == 3
    assert {d.status for d in deliveries} == {"cancelled"}
    assert all((d.last_error or "").startswith("subscription disabled") for d in deliveries)
    assert harness.enqueue(3) == 0


def test_failures_must_span_the_period_before_disabling(harness: Harness) -> None:
    with running_receiver(default=500) as failing:
        created = harness.subscribe(failing.url)
        harness.enqueue(1)
        harness.start(replace(FAST, disable_after_failures=2, disable_after_seconds=3600.0))
        [delivery] = harness.settled(created.id, 1)
    assert (delivery.status, len(delivery.attempts)) == ("failed", FAST.max_attempts)
    subscription = harness.subscription(created.id)
    assert (subscription.state, subscription.consecutive_failures) == ("active", 5)


def test_unreachable_receivers_are_failed_attempts_with_the_error(harness: Harness) -> None:
    with running_receiver() as gone:  # a port nothing listens on any more
        closed = gone.url
    refused = harness.subscribe(closed)
    bad_host = harness.subscribe("http://bad-host.example/hooks")
    with transaction(harness.sessions, write=True) as session:
        # A host name IDNA cannot encode, as stored before check_url refused such names.
        row = session.get(WebhookSubscription, bad_host.id)
        assert row is not None
        row.url = "http://a..b/hooks"
    harness.enqueue(1)
    harness.start(replace(FAST, max_attempts=1))
    for created, error in ((refused, "ConnectError"), (bad_host, "TargetRefused")):
        [delivery] = harness.settled(created.id, 1)
        assert delivery.status == "failed"
        [attempt] = delivery.attempts
        assert attempt.status_code is None
        assert (attempt.error or "").startswith(error), attempt.error


def test_an_attempt_whose_dispatcher_died_is_sent_again_when_its_claim_runs_out(
    harness: Harness, receiver: Receiver, sessions: sessionmaker[Session]
) -> None:
    created = harness.subscribe(receiver.url)
    harness.enqueue(1)
    now = datetime.now(UTC)
    with transaction(sessions, write=True) as session:  # a dispatcher claims, then dies
        [claim] = repository.claim_due(
            session, now=now, lease_until=now + timedelta(hours=1), limit=5
        )
    assert claim.attempt == 1
    with transaction(sessions, write=True) as session:  # claimed: no one else may send it
        assert repository.claim_due(session, now=now, lease_until=now, limit=5) == []
        row = repository.delivery(session, claim.seq)
        assert row is not None
        row.next_attempt_at = now  # the claim runs out

    harness.start()
    [delivery] = harness.settled(created.id, 1)
    assert delivery.status == "delivered"
    assert [a.attempt for a in delivery.attempts] == [2]
    [request] = receiver.received()
    assert request.headers["webhook-id"] == claim.message_id == delivery.id


def test_two_dispatchers_on_one_database_send_each_delivery_once(
    harness: Harness, receiver: Receiver
) -> None:
    created = harness.subscribe(receiver.url)
    count = 30
    harness.enqueue(*range(count))
    harness.start()
    harness.start()
    deliveries = harness.settled(created.id, count)

    assert {d.status for d in deliveries} == {"delivered"}
    assert all(len(d.attempts) == 1 for d in deliveries)
    sent = Counter(r.headers["webhook-id"] for r in receiver.received())
    assert sent == Counter({d.id: 1 for d in deliveries})


def test_enqueue_writes_one_row_per_active_subscription_and_alert_once(
    harness: Harness, receiver: Receiver
) -> None:
    assert harness.enqueue(1) == 0  # no subscriptions yet
    first = harness.subscribe(receiver.url)
    second = harness.subscribe(receiver.url)
    assert harness.enqueue(1, 2) == 4
    assert harness.enqueue(2, 3) == 2  # alert 2 is in the outbox already
    ids = {d.id for s in (first, second) for d in harness.deliveries(s.id)}
    assert len(ids) == 6  # a message id per (subscription, alert)
    assert harness.subscription(first.id).pending_deliveries == 3


def test_an_enqueue_rolled_back_with_its_alert_leaves_no_delivery(
    harness: Harness, receiver: Receiver, sessions: sessionmaker[Session]
) -> None:
    created = harness.subscribe(receiver.url)
    enqueued: list[int] = []

    def failing_alert_transaction() -> None:
        with transaction(sessions, write=True) as session:
            enqueued.append(enqueue_alert_deliveries(session, [alert(1)], datetime.now(UTC)))
            raise RuntimeError("the alert's transaction fails")

    with pytest.raises(RuntimeError):
        failing_alert_transaction()
    assert enqueued == [1]
    assert harness.deliveries(created.id) == []


def claim_all(sessions: sessionmaker[Session]) -> list[repository.Claimed]:
    """Claim every due delivery as a dispatcher would, with a claim that has already run out."""
    now = datetime.now(UTC)
    with transaction(sessions, write=True) as session:
        return repository.claim_due(session, now=now, lease_until=now, limit=100)


def outcome(status_code: int) -> Outcome:
    return Outcome(at=datetime.now(UTC), duration_ms=1.0, status_code=status_code)


def test_a_late_result_of_an_expired_claim_is_logged_but_does_not_decide(
    harness: Harness, sessions: sessionmaker[Session]
) -> None:
    created = harness.subscribe("http://127.0.0.1:9/never-sent")
    harness.enqueue(1)
    [stale] = claim_all(sessions)
    [fresh] = claim_all(sessions)  # the first claim ran out; another dispatcher took it
    assert (stale.attempt, fresh.attempt) == (1, 2)

    record(sessions, FAST, stale, outcome(500), now=datetime.now(UTC))
    [delivery] = harness.deliveries(created.id)
    assert (delivery.status, delivery.last_status_code) == ("pending", None)
    record(sessions, FAST, fresh, outcome(200), now=datetime.now(UTC))
    [delivery] = harness.deliveries(created.id)
    assert delivery.status == "delivered"
    assert [(a.attempt, a.status_code) for a in delivery.attempts] == [(1, 500), (2, 200)]


def test_an_attempt_in_flight_when_its_subscription_is_disabled_still_counts(
    harness: Harness, sessions: sessionmaker[Session]
) -> None:
    created = harness.subscribe("http://127.0.0.1:9/never-sent")
    harness.enqueue(1, 2)
    first, second = claim_all(sessions)

    record(sessions, FAST, first, outcome(410), now=datetime.now(UTC))
    statuses = {d.alert_id: d.status for d in harness.deliveries(created.id)}
    assert statuses == {"alert-1": "failed", "alert-2": "cancelled"}
    record(sessions, FAST, second, outcome(200), now=datetime.now(UTC))
    statuses = {d.alert_id: d.status for d in harness.deliveries(created.id)}
    assert statuses == {"alert-1": "failed", "alert-2": "delivered"}
    assert harness.subscription(created.id).state == "disabled"


def test_a_trickling_receiver_is_cut_off_at_the_attempts_deadline(
    harness: Harness, receiver: Receiver
) -> None:
    """Each byte comes well within the read timeout, so only a deadline for the whole attempt
    ends it: a failed attempt, retried, instead of a worker held for as long as it trickles."""
    receiver.script(TRICKLE)
    created = harness.subscribe(receiver.url)
    harness.enqueue(1)
    harness.start(replace(FAST, request_timeout=1.0, attempt_deadline=1.0))
    [delivery] = harness.settled(created.id, 1)
    first, second = delivery.attempts[:2]
    assert (first.error or "").startswith("DeadlinePassed"), first.error
    assert (delivery.status, second.status_code) == ("delivered", 200)


def test_a_receiver_the_allow_list_does_not_admit_is_refused_at_delivery(
    harness: Harness, receiver: Receiver
) -> None:
    """Subscribed while the allow-list admitted loopback, delivered by a dispatcher whose list
    does not: the attempt is refused before anything is sent."""
    created = harness.subscribe(receiver.url)
    harness.enqueue(1)
    harness.start(replace(FAST, max_attempts=1), allow=AllowList())
    [delivery] = harness.settled(created.id, 1)
    [attempt] = delivery.attempts
    assert (delivery.status, attempt.status_code) == ("failed", None)
    assert "loopback" in (attempt.error or ""), attempt.error
    assert receiver.received() == []


def test_delivery_connects_to_the_address_it_checked_not_a_second_lookup(
    harness: Harness, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hooks.test` resolves only through supportgate's own check (the system's resolver has
    never heard of it): a delivery that arrives was sent to the checked address, with the
    URL's host in `Host`. When the name then resolves to a refused address (DNS rebinding),
    the next attempt is refused, not sent."""
    answers = {"hooks.test": [ipaddress.ip_address("127.0.0.1")]}
    monkeypatch.setattr(targets, "resolve", lambda host, _port: answers[host])
    port = int(receiver.url.rsplit(":", 1)[1].split("/")[0])
    created = harness.subscribe(f"http://hooks.test:{port}/hooks")
    harness.enqueue(1)
    harness.start(replace(FAST, max_attempts=1))
    [delivered] = harness.settled(created.id, 1)
    assert delivered.status == "delivered", delivered.attempts
    [request] = receiver.received()
    assert request.headers["host"] == f"hooks.test:{port}"

    answers["hooks.test"] = [ipaddress.ip_address("10.0.0.7")]
    harness.enqueue(2)
    later = wait_until(
        lambda: [d for d in harness.deliveries(created.id) if d.status == "failed"] or None,
        "the rebound delivery refused",
    )
    assert "10.0.0.7" in (later[0].last_error or "")
    assert len(receiver.received()) == 1
