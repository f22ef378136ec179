"""The events registry: handlers in the order registered, by event type; a failing handler
does not stop the others; events are plain data."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from supportgate.events import (
    DecisionsRecorded,
    DeliveriesEnqueued,
    Event,
    Events,
    HardwareRecorded,
    MatrixPublished,
    WaiverChanged,
    decisions_recorded,
)

pytestmark = pytest.mark.fast

AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_handlers_run_in_the_order_registered_for_their_event_type() -> None:
    events = Events()
    heard: list[str] = []
    events.on(MatrixPublished, lambda e: heard.append(f"first {e.version}"))
    events.on(DeliveriesEnqueued, lambda e: heard.append(f"deliveries {e.count}"))
    events.on(MatrixPublished, lambda e: heard.append(f"second {e.version}"))

    events.publish([MatrixPublished(version="2026.12.1"), DeliveriesEnqueued(count=3)])

    assert heard == ["first 2026.12.1", "second 2026.12.1", "deliveries 3"]


def test_a_failing_handler_is_logged_and_the_others_still_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    events = Events()
    heard: list[int] = []

    def broken(_event: DeliveriesEnqueued) -> None:
        raise RuntimeError("the dispatcher is away")

    events.on(DeliveriesEnqueued, broken)
    events.on(DeliveriesEnqueued, lambda e: heard.append(e.count))

    events.publish([DeliveriesEnqueued(count=1), DeliveriesEnqueued(count=2)])

    assert heard == [1, 2]
    assert "event_handler_failed" in capsys.readouterr().out


def test_events_round_trip_as_json() -> None:
    sent: list[Event] = [
        HardwareRecorded(name="pool-a", decision_id="d-1", evaluated_at=AT),
        MatrixPublished(version="2026.12.1"),
        WaiverChanged(
            waiver_id="w-1",
            action="deleted",
            kind="DeploymentManifest",
            name="dep-a",
            affects_tracked=True,
        ),
        decisions_recorded([("rejected", "submission")] * 2 + [("supported", "matrix")]),
        DeliveriesEnqueued(count=4),
    ]

    received = msgspec.json.decode(msgspec.json.encode(sent), type=list[Event])

    assert received == sent
    counts = received[3]
    assert isinstance(counts, DecisionsRecorded)
    assert {(c.verdict, c.cause, c.count) for c in counts.counts} == {
        ("rejected", "submission", 2),
        ("supported", "matrix", 1),
    }
    assert isinstance(received[2], WaiverChanged)
    assert received[2].trigger == "waiver:w-1:deleted"
