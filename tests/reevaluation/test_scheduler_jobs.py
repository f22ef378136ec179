"""The scheduler's jobs on SQLite and PostgreSQL, on the service's fake clock: one failing job
(the bundle reload) leaves the others running, is logged with its name, counted in /metrics
and tried again on the next tick; and what fell due while the service was stopped (a waiver's
expiry, a version's effective_from, a cron instant) is applied at the next start, with its own
cause."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from structlog.testing import capture_logs

from supportgate.errors import UsageError
from supportgate.events import Events, JobFailed
from supportgate.reevaluation.schedule import SweepScheduler
from supportgate.runtime import Runtime

from ..api import Api
from ..api_support import created, example
from ..clock import FakeClock
from ..matrix.test_matrix import publish, with_sm90
from ..waiting import wait_until

PROD = ("DeploymentManifest", "v41-flash-h100-prod")
POOL = ("HardwareManifest", "h100-pool-a")


def _text(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def waive_prod(api: Api, expires_at: datetime) -> str:
    response = api.client.post(
        "/v1/waivers",
        json={
            "rule": "port.production",
            "kind": PROD[0],
            "name": PROD[1],
            "justification": "a pilot",
            "expires_at": expires_at.isoformat(),
        },
        headers=api.headers("admin"),
    )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def latest(runtime: Runtime, key: tuple[str, str]) -> tuple[str, str, str]:
    """The tracked manifest's latest decision: (verdict, cause, matrix_version)."""
    decision = runtime.tracking.one(*key).latest_decision
    assert decision is not None
    return (decision.verdict, decision.cause, decision.matrix_version)


def triggers(runtime: Runtime) -> set[str]:
    with runtime.db.connect() as connection:
        return {str(row[0]) for row in connection.exec_driver_sql("SELECT trigger FROM sweeps")}


def alert_causes(runtime: Runtime, name: str, to: str) -> list[str]:
    with runtime.db.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT name, to_verdict, cause FROM alerts ORDER BY seq"
        ).all()
    return [str(cause) for found, verdict, cause in rows if (found, verdict) == (name, to)]


def rejected_then_waived(api: Api, clock: FakeClock) -> datetime:
    """The rejected production deployment, waived for an hour (judged waived); the expiry."""
    created(api, example("hw-h100-pool-a.yaml"))
    assert created(api, example("dep-h100-production.yaml"))["verdict"] == "rejected"
    expires_at = clock.now() + timedelta(hours=1)
    waive_prod(api, expires_at)
    wait_until(lambda: latest(api.runtime, PROD)[0] == "experimental", "the waived decision")
    return expires_at


def publish_later(api: Api, clock: FakeClock, version: str) -> None:
    """A version that takes effect in half an hour (the scheduler has seen it pending)."""
    document = with_sm90(version)
    document["effective_from"] = _text(clock.now() + timedelta(minutes=30))
    assert publish(api, document).json()["pending"] is True
    api.runtime.sweeps.tick()
    assert api.runtime.reevaluation.wait_idle()


def job_failures(api: Api, job: str) -> float:
    text = api.client.get("/metrics").text
    line = f'supportgate_scheduler_job_failures_total{{job="{job}"}} '
    values = [float(row[len(line) :]) for row in text.splitlines() if row.startswith(line)]
    return values[0] if values else 0.0


def test_a_failing_reload_stops_no_other_job(
    clocked_api: Api, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = clocked_api
    expires_at = rejected_then_waived(api, clock)
    publish_later(api, clock, "2026.12.5")

    def broken_reload() -> bool:
        raise TypeError("a bundle that breaks the reload")

    monkeypatch.setattr(api.runtime.policies, "reload", broken_reload)
    clock.advance(timedelta(days=1, hours=1))  # past the expiry, the version and a cron instant
    with capture_logs() as logs:
        api.runtime.sweeps.tick()
    assert api.runtime.reevaluation.wait_idle()

    started = triggers(api.runtime)
    assert f"waiver:{_text(expires_at)}" in started
    assert "matrix:2026.12.5" in started
    assert any(trigger.startswith("schedule:") for trigger in started)
    assert latest(api.runtime, POOL)[2] == "2026.12.5"
    assert latest(api.runtime, PROD)[0] != "experimental"  # the waiver is no longer in force
    failed = [event for event in logs if event["event"] == "scheduler_job_failed"]
    assert [event["job"] for event in failed] == ["policy-reload"]
    assert job_failures(api, "policy-reload") == 1.0

    api.runtime.sweeps.tick()  # tried again on the next run
    assert job_failures(api, "policy-reload") == 2.0
    monkeypatch.undo()
    api.runtime.sweeps.tick()
    assert job_failures(api, "policy-reload") == 2.0


def restart(api: Api, clock: FakeClock, down_for: timedelta) -> Runtime:
    """Stop the service's timed parts, move the clock on while it is down, and start another
    service on the same database and clock (its scheduler's first tick is the one at start)."""
    api.runtime.sweeps.stop()
    api.runtime.reevaluation.stop()
    clock.advance(down_for)
    restarted = Runtime.build(replace(api.runtime.settings), clock=clock)
    restarted.start(upgrade_schema=False)
    restarted.sweeps.tick()
    assert restarted.reevaluation.wait_idle()
    return restarted


def test_a_waiver_that_expired_while_stopped_is_applied_at_start(
    clocked_api: Api, clock: FakeClock
) -> None:
    expires_at = rejected_then_waived(clocked_api, clock)
    restarted = restart(clocked_api, clock, timedelta(hours=2))
    try:
        assert f"waiver:{_text(expires_at)}" in triggers(restarted)
        assert latest(restarted, PROD) == ("rejected", "waiver", "2026.11.1")
        assert alert_causes(restarted, PROD[1], "rejected") == ["waiver"]
    finally:
        restarted.stop()


def test_a_version_that_took_effect_while_stopped_is_applied_at_start(
    clocked_api: Api, clock: FakeClock
) -> None:
    created(clocked_api, example("hw-h100-pool-a.yaml"))
    publish_later(clocked_api, clock, "2026.12.6")
    restarted = restart(clocked_api, clock, timedelta(hours=2))
    try:
        assert "matrix:2026.12.6" in triggers(restarted)
        assert latest(restarted, POOL) == ("supported", "matrix", "2026.12.6")
        assert alert_causes(restarted, POOL[1], "supported") == ["matrix"]
    finally:
        restarted.stop()


def test_a_cron_instant_that_passed_while_stopped_is_swept_at_start(
    clocked_api: Api, clock: FakeClock
) -> None:
    created(clocked_api, example("hw-h100-pool-a.yaml"))
    clock.advance(timedelta(days=1))  # one cron instant (03:00 UTC) while running
    clocked_api.runtime.sweeps.tick()
    assert clocked_api.runtime.reevaluation.wait_idle()
    [ran] = [
        trigger for trigger in triggers(clocked_api.runtime) if trigger.startswith("schedule:")
    ]
    restarted = restart(clocked_api, clock, timedelta(days=2))  # two more while stopped
    try:
        swept = {trigger for trigger in triggers(restarted) if trigger.startswith("schedule:")}
        missed = datetime.fromisoformat(ran.removeprefix("schedule:")) + timedelta(days=2)
        assert swept == {ran, f"schedule:{_text(missed)}"}  # the latest, as the cron coalesces
    finally:
        restarted.stop()


def test_a_failing_matrix_source_poll_is_counted_and_stops_nothing(clocked_api: Api) -> None:
    """The source's poll is a job of its own (at start, then every interval)."""

    class Unreachable:
        configured = True
        poll_seconds = 3600.0

        def poll(self, *, requested: bool = False) -> object:
            raise OSError(f"the source cannot be reached (requested={requested})")

    runtime = clocked_api.runtime
    failed: list[str] = []
    events = Events()
    events.on(JobFailed, lambda event: failed.append(event.job))
    scheduler = SweepScheduler(
        runtime.reevaluation,
        runtime.matrices,
        cron="0 3 * * *",
        matrix_source=Unreachable(),
        events=events,
    )
    scheduler.start()
    try:
        wait_until(lambda: "matrix-source" in failed, "the failed poll counted")
        scheduler.tick()  # the other jobs run
    finally:
        scheduler.stop()
    assert set(failed) == {"matrix-source"}


def test_a_bad_cron_line_is_a_usage_error_naming_the_variable(clocked_api: Api) -> None:
    runtime = clocked_api.runtime
    with pytest.raises(UsageError, match="not a crontab line") as raised:
        SweepScheduler(runtime.reevaluation, runtime.matrices, cron="every day")
    assert raised.value.field == "SUPPORTGATE_REEVALUATE_CRON"
