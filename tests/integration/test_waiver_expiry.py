"""A waiver end to end, on SQLite and PostgreSQL, with the real sweeper and scheduler: creating
it re-evaluates the rejected manifest at once (cause `waiver`), its expiry flips the verdict
back with no request, and both changes raise alerts. The service's clock is a fake one: the
test moves it past the expiry and ticks the scheduler, as its wake-up after an expiry does,
rather than wait for the time to pass."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, timedelta
from typing import Any

import pytest

from ..api import Api, running_api
from ..api_tests.support import created, example
from ..clock import FakeClock
from ..waiting import wait_until
from .test_scheduler_jobs import PROD, waive_prod

EXPIRES_IN_S = 3600.0  # an hour on the fake clock; the real sweeps stamp the real time


def latest(api: Api) -> dict[str, Any]:
    response = api.client.get(
        f"/v1/manifests/{PROD[0]}/{PROD[1]}", headers=api.headers("procurement")
    )
    assert response.status_code == 200, response.text
    decision: dict[str, Any] = response.json()["latest_decision"]
    return decision


def latest_with(api: Api, verdict: str) -> dict[str, Any] | None:
    decision = latest(api)
    return decision if decision["verdict"] == verdict else None


def alerts(api: Api) -> list[dict[str, Any]]:
    response = api.client.get("/v1/alerts", headers=api.headers("procurement"))
    assert response.status_code == 200, response.text
    return [
        item
        for item in response.json()["items"]
        if (item["manifest"]["kind"], item["manifest"]["name"]) == PROD
    ]


def sweep_triggers(api: Api) -> set[str]:
    with api.runtime.db.connect() as connection:
        rows = connection.exec_driver_sql("SELECT trigger FROM sweeps WHERE cause = 'waiver'")
        return {str(row[0]) for row in rows}


@pytest.fixture
def clocked_api(migrated_db_url: str, clock: FakeClock) -> Iterator[Api]:
    """tests/conftest.py's, with the nightly sweep twelve hours away from the hour the clock
    starts in: the clock jumps past the expiry in one step, and a run that started at 02:xx
    UTC saw the 03:00 sweep, due in that same tick, claim the expiry's flip (cause schedule)."""
    nightly = f"0 {(clock.now().hour + 12) % 24} * * *"
    with running_api(migrated_db_url, clock=clock, reevaluate_cron=nightly) as running:
        yield running


def test_a_short_waiver_lets_a_manifest_pass_and_then_rejects_it_again(
    clocked_api: Api, clock: FakeClock
) -> None:
    api = clocked_api
    created(api, example("hw-h100-pool-a.yaml"))
    assert created(api, example("dep-h100-production.yaml"))["verdict"] == "rejected"

    expires_at = clock.now() + timedelta(seconds=EXPIRES_IN_S)
    waiver_id = waive_prod(api, expires_at)

    # Re-evaluated at once: the waived decision is the manifest's latest, with an alert.
    waived = wait_until(lambda: latest_with(api, "experimental"), "the waiver's re-evaluation")
    assert waived["cause"] == "waiver"
    (violation,) = [v for v in waived["violations"] if v["rule"] == "port.production"]
    assert (violation["severity"], violation["waiver_id"]) == ("waived", waiver_id)

    # Before the expiry a tick changes nothing.
    clock.advance(EXPIRES_IN_S - 1)
    api.runtime.sweeps.tick()
    assert sweep_triggers(api) == {f"waiver:{waiver_id}:created"}

    # Nobody asks again: the expiry alone flips it back.
    clock.advance(2)
    api.runtime.sweeps.tick()
    rejected = wait_until(lambda: latest_with(api, "rejected"), "the expiry's re-evaluation")
    assert rejected["cause"] == "waiver"
    expiry = expires_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
    assert sweep_triggers(api) == {f"waiver:{expiry}", f"waiver:{waiver_id}:created"}
    (violation,) = [v for v in rejected["violations"] if v["rule"] == "port.production"]
    assert violation["severity"] == "deny"
    assert "waiver_id" not in violation

    def two_alerts() -> list[dict[str, Any]] | None:
        found = alerts(api)
        return found if len(found) >= 2 else None

    raised = wait_until(two_alerts, "two alerts")
    flips = sorted(
        ((a["from"], a["to"], a["cause"], a["decision_id"]) for a in raised),
        key=lambda flip: flip[0] != "rejected",
    )
    assert flips == [
        ("rejected", "experimental", "waiver", waived["id"]),
        ("experimental", "rejected", "waiver", rejected["id"]),
    ]
