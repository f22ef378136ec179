"""Sweeps through the API on SQLite and PostgreSQL: a matrix publish turns verdicts and raises
alerts, a no-change sweep records nothing, a pool change re-evaluates its deployments, a
waiver-free submission that flips a verdict alerts too; POST/GET /v1/reevaluations; GET
/v1/alerts with `since` and cursors."""

from __future__ import annotations

import shutil
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from supportgate.audit.verify import verify_log
from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.ledger import writer
from supportgate.ledger.batches import Batch
from supportgate.ledger.write import apply_batch
from supportgate.reevaluation.services import SweepPaused
from supportgate.reevaluation.views import SweepView
from supportgate.runtime import Runtime

from ..api import Api, running_api
from ..api_support import created, deployment, hardware, rows
from ..clock import FakeClock
from ..matrix.test_matrix import matrix, publish, with_sm90
from ..waiting import wait_until


def get(api: Api, path: str, role: str = "procurement", **params: Any) -> Any:
    response = api.client.get(path, headers=api.headers(role), params=params)
    assert response.status_code == 200, response.text
    return response.json()


def sweep_done(api: Api, sweep_id: str) -> dict[str, Any]:
    def finished() -> dict[str, Any] | None:
        view: dict[str, Any] = get(api, f"/v1/reevaluations/{sweep_id}", "admin")
        return view if view["status"] in ("finished", "failed") else None

    return wait_until(finished, f"sweep {sweep_id} to end")


def latest(api: Api, kind: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = get(api, f"/v1/manifests/{kind}/{name}")["latest_decision"]
    return found


def fleet(api: Api) -> None:
    created(api, hardware("pool-a"))
    created(api, hardware("pool-b"))
    created(api, deployment("trial-a", ref="pool-a"))
    created(api, deployment("trial-b", ref="pool-b"))


def test_publishing_sm90_turns_the_h100_verdicts_with_alerts(api: Api) -> None:
    fleet(api)
    before = rows(api).decisions
    assert latest(api, "HardwareManifest", "pool-a")["verdict"] == "experimental"

    assert publish(api, with_sm90("2026.12.1")).status_code == 201

    def four_alerts() -> list[dict[str, Any]] | None:
        items: list[dict[str, Any]] = get(api, "/v1/alerts")["items"]
        return items if len(items) == 4 else None

    alerts = wait_until(four_alerts, "four alerts")
    assert {(a["manifest"]["name"], a["from"], a["to"], a["cause"]) for a in alerts} == {
        ("pool-a", "experimental", "supported", "matrix"),
        ("pool-b", "experimental", "supported", "matrix"),
        ("trial-a", "experimental", "supported", "matrix"),
        ("trial-b", "experimental", "supported", "matrix"),
    }
    for alert in alerts:
        assert set(alert) == {
            "id",
            "manifest",
            "from",
            "to",
            "cause",
            "matrix_version",
            "at",
            "decision_id",
            "gained",
            "lost",
        }
        assert alert["matrix_version"] == "2026.12.1"
        # why: listed sm90 lifts the platform warning, nothing is gained
        assert alert["gained"] == []
        assert "support.platform" in {v["rule"] for v in alert["lost"]}
        decision = latest(api, alert["manifest"]["kind"], alert["manifest"]["name"])
        assert decision["id"] == alert["decision_id"]
        assert decision["verdict"] == "supported"
        assert decision["cause"] == "matrix"
    assert rows(api).decisions == before + 4
    assert verify_log(api.runtime.sessions, verifier=api.runtime.checkpointer.verifier()).intact


def test_a_sweep_that_changes_nothing_records_no_decision(api: Api) -> None:
    fleet(api)
    first = api.runtime.reevaluation.run_sweep("schedule", trigger="test:first")
    # Submitted under the current matrix and policies: the decisions stand as they are.
    assert (first.status, first.counts.evaluated, first.counts.changed) == ("finished", 4, 0)
    stamp = get(api, "/v1/manifests/HardwareManifest/pool-a")["last_evaluated_at"]
    decisions = rows(api).decisions

    second = api.runtime.reevaluation.run_sweep("schedule", trigger="test:second")

    assert (second.counts.evaluated, second.counts.changed, second.counts.failed) == (4, 0, 0)
    assert rows(api).decisions == decisions
    assert get(api, "/v1/alerts")["items"] == []
    assert get(api, "/v1/manifests/HardwareManifest/pool-a")["last_evaluated_at"] > stamp


def test_the_same_trigger_is_one_sweep(api: Api) -> None:
    service = api.runtime.reevaluation
    first = service.start_sweep("schedule", trigger="test:same")
    assert service.start_sweep("schedule", trigger="test:same") == first
    assert sweep_done(api, first)["trigger"] == "test:same"


def test_a_changed_pool_re_evaluates_its_deployments(api: Api) -> None:
    fleet(api)
    old_compiler = {"name": "gcc", "version": "11.4.0"}
    assert created(api, hardware("pool-a", compiler=old_compiler))["verdict"] == "rejected"

    def trial_a_redecided() -> dict[str, Any] | None:
        decision = latest(api, "DeploymentManifest", "trial-a")
        return decision if decision["cause"] == "hardware" else None

    assert wait_until(trial_a_redecided, "trial-a's re-evaluation")["verdict"] == "rejected"
    assert latest(api, "DeploymentManifest", "trial-b")["cause"] == "submission"
    alerts = get(api, "/v1/alerts")["items"]
    assert [(a["manifest"]["name"], a["cause"], a["to"]) for a in alerts] == [
        ("pool-a", "submission", "rejected"),
        ("trial-a", "hardware", "rejected"),
    ]


def test_only_a_changed_pool_sweeps_its_deployments(api: Api) -> None:
    """A pool CI re-posts as it was changes no deployment's input: no `hardware` sweep."""

    def hardware_sweeps() -> int:
        assert api.runtime.reevaluation.wait_idle()
        with api.runtime.db.connect() as connection:
            query = text("SELECT count(*) FROM sweeps WHERE cause = 'hardware'")
            return int(connection.execute(query).scalar_one())

    fleet(api)
    before = hardware_sweeps()
    created(api, hardware("pool-a"))
    assert hardware_sweeps() == before
    created(api, hardware("pool-a", python="3.10.4"))
    assert hardware_sweeps() == before + 1


def test_a_resubmission_that_flips_the_verdict_alerts(api: Api) -> None:
    created(api, hardware("pool-a"))
    created(api, hardware("pool-a"))  # the same verdict again: no alert
    assert get(api, "/v1/alerts")["items"] == []
    rejected = created(api, hardware("pool-a", python="3.10.4"))
    [alert] = get(api, "/v1/alerts")["items"]
    assert alert["decision_id"] == rejected["id"]
    assert (alert["from"], alert["to"], alert["cause"]) == (
        "experimental",
        "rejected",
        "submission",
    )


def test_a_version_that_takes_effect_later_sweeps_then(clocked_api: Api, clock: FakeClock) -> None:
    """The service's clock is a fake one: the test moves it past `effective_from` and ticks
    the scheduler, as its wake-up at that moment does, rather than wait."""
    api = clocked_api
    fleet(api)
    soon = clock.now() + timedelta(seconds=30)
    document = with_sm90("2026.12.2")
    document["effective_from"] = soon.isoformat().replace("+00:00", "Z")
    assert publish(api, document).json()["pending"] is True
    api.runtime.sweeps.tick()
    assert api.runtime.reevaluation.wait_idle()
    assert latest(api, "HardwareManifest", "pool-a")["matrix_version"] == "2026.11.1"

    clock.advance(soon - clock.now())
    api.runtime.sweeps.tick()

    def under_new_version() -> dict[str, Any] | None:
        found: dict[str, Any] = latest(api, "HardwareManifest", "pool-a")
        return found if found["matrix_version"] == "2026.12.2" else None

    decision = wait_until(under_new_version, "pool-a's decision under 2026.12.2")
    assert (decision["verdict"], decision["cause"]) == ("supported", "matrix")


def test_post_reevaluations_starts_a_sweep_of_the_named_manifests(api: Api) -> None:
    fleet(api)
    response = api.client.post(
        "/v1/reevaluations",
        json={"manifests": [{"kind": "HardwareManifest", "name": "pool-a"}]},
        headers=api.headers("admin"),
    )
    assert response.status_code == 202, response.text
    started = response.json()
    assert (started["cause"], started["status"]) == ("schedule", "queued")
    done = sweep_done(api, started["id"])
    assert done["counts"] == {"evaluated": 1, "changed": 0, "failed": 0}
    assert done["duration_seconds"] is not None
    assert done["matrix_version"] == "2026.11.1"

    everything = api.client.post("/v1/reevaluations", headers=api.headers("admin"))
    assert everything.status_code == 202
    assert sweep_done(api, everything.json()["id"])["counts"]["evaluated"] == 4


def test_reevaluation_requests_are_checked(api: Api) -> None:
    post = api.client.post
    bad = post(
        "/v1/reevaluations",
        json={"manifests": [{"kind": "Pod", "name": "x"}]},
        headers=api.headers("admin"),
    )
    assert bad.status_code == 400
    assert bad.json()["field"] == "$.manifests[0].kind"
    assert post("/v1/reevaluations", headers=api.headers("procurement")).status_code == 403
    unknown = api.client.get("/v1/reevaluations/nope", headers=api.headers("admin"))
    assert unknown.status_code == 404
    assert api.client.get("/v1/alerts", headers=api.headers("ci")).status_code == 403
    assert (
        api.client.get(
            "/v1/alerts", params={"since": "yesterday"}, headers=api.headers("procurement")
        ).status_code
        == 400
    )


def test_alerts_page_with_since_and_cursor(api: Api) -> None:
    fleet(api)
    publish(api, with_sm90("2026.12.1"))
    wait_until(lambda: len(get(api, "/v1/alerts")["items"]) == 4, "four alerts")
    publish(api, matrix("2026.12.3"))  # sm90 unlisted again: four alerts back
    wait_until(lambda: len(get(api, "/v1/alerts")["items"]) == 8, "eight alerts")

    seen: list[dict[str, Any]] = []
    page = get(api, "/v1/alerts", limit=3)
    while True:
        seen.extend(page["items"])
        if page["next_cursor"] is None:
            break
        page = get(api, "/v1/alerts", limit=3, cursor=page["next_cursor"])
    assert len(seen) == 8
    assert len({a["id"] for a in seen}) == 8
    assert [a["matrix_version"] for a in seen] == ["2026.12.1"] * 4 + ["2026.12.3"] * 4

    later = seen[4]["at"]
    recent = get(api, "/v1/alerts", since=later)["items"]
    assert [a["id"] for a in recent] == [a["id"] for a in seen[4:]]


@pytest.mark.parametrize("memo", [True, False], ids=["memo", "plain"])
def test_evidence_that_turns_stale_between_sweeps_is_a_new_decision(
    clocked_api: Api, clock: FakeClock, memo: bool
) -> None:
    """The same with the sweep memo (a speed device) and without it: the plain sweep is its
    oracle (a batch per manifest)."""
    api = clocked_api
    api.runtime.reevaluation.use_memos = memo
    api.runtime.reevaluation.batch_size = 1
    created(api, hardware("pool-a"))
    turning = clock.now() - timedelta(days=90) + timedelta(seconds=3)
    doc = deployment("trial-a", ref="pool-a")
    doc["spec"]["evidence"]["build"]["at"] = turning.strftime("%Y-%m-%dT%H:%M:%SZ")
    submitted = created(api, doc)
    assert "evidence.stale" not in {v["rule"] for v in submitted["violations"]}
    service = api.runtime.reevaluation
    assert service.run_sweep("schedule", trigger="test:fresh").counts.changed == 0

    clock.advance(4)  # the evidence is now older than evidence_max_age_days
    assert service.run_sweep("schedule", trigger="test:stale").counts.changed == 1
    decision = latest(api, "DeploymentManifest", "trial-a")
    assert decision["cause"] == "schedule"
    assert "evidence.stale" in {v["rule"] for v in decision["violations"]}
    # Stale it stays: the next sweep knows it unchanged.
    assert service.run_sweep("schedule", trigger="test:still").counts.changed == 0


def test_metrics_show_the_last_sweep(api: Api) -> None:
    fleet(api)
    assert api.runtime.reevaluation.wait_idle()  # the pools' own sweeps come first
    publish(api, with_sm90("2026.12.1"))
    sweep_id = api.runtime.reevaluation.start_sweep("matrix", trigger="matrix:2026.12.1")
    done = sweep_done(api, sweep_id)
    text = api.client.get("/metrics").text
    metrics = dict(
        line.rsplit(" ", 1) for line in text.splitlines() if line.startswith("supportgate_last_")
    )
    assert float(metrics["supportgate_last_sweep_changed"]) == done["counts"]["changed"] == 4
    assert float(metrics["supportgate_last_sweep_evaluated"]) == 4
    finished = datetime.fromisoformat(done["finished_at"]).timestamp()
    assert float(metrics["supportgate_last_sweep_timestamp_seconds"]) == pytest.approx(finished)
    assert float(metrics["supportgate_last_sweep_duration_seconds"]) == pytest.approx(
        done["duration_seconds"], abs=0.001
    )


def test_a_new_policy_revision_sweeps_at_startup(api: Api, tmp_path: Path) -> None:
    fleet(api)
    policies = tmp_path / "policies"
    shutil.copytree(DEFAULT_POLICY_DIR, policies)
    entrypoint = policies / "supportgate" / "decision" / "decision.rego"
    entrypoint.write_text(entrypoint.read_text() + "\n# a new revision: this comment\n")
    settings = replace(api.runtime.settings, policy_dir=policies)
    upgraded = Runtime.build(settings)
    upgraded.start(upgrade_schema=True)
    try:
        revision = upgraded.policies.bundle.revision
        assert revision != api.runtime.policies.bundle.revision

        def policy_sweep() -> SweepView | None:
            with upgraded.db.connect() as connection:
                row = connection.exec_driver_sql(
                    "SELECT id FROM sweeps WHERE cause = 'policy'"
                ).first()
            if row is None:
                return None
            view = upgraded.reevaluation.view(str(row[0]))
            return view if view is not None and view.status == "finished" else None

        view = wait_until(policy_sweep, "the policy revision's sweep")
        assert view.trigger.startswith(f"policy:{revision}:")
        assert (view.counts.evaluated, view.counts.changed) == (4, 4)
    finally:
        upgraded.stop()
    decision = latest(api, "DeploymentManifest", "trial-a")
    assert (decision["cause"], decision["policy_revision"]) == ("policy", revision)


FREEZE_RULE = """package supportgate.org.freeze

# METADATA
# title: Pools judged after the freeze
# description: A pool judged after the change freeze is flagged.
# custom:
#   id: org.freeze.after
#   severity: warn
warn contains {"rule": "org.freeze.after", "path": "metadata.name", "message": "frozen"} if {
	input.manifest.kind == "HardwareManifest"
	time.parse_rfc3339_ns(input.evaluated_at) > FREEZE_NS
}
"""


def test_an_organisation_rule_that_reads_the_time_is_judged_by_every_sweep(
    migrated_db_url: str, tmp_path: Path
) -> None:
    """The sweep memo knows the built-in policies' uses of the time only: under a rule that
    compares `evaluated_at` itself, a no-change sweep evaluates (and so sees the rule fire)."""
    clock = FakeClock()
    freeze = clock.now() + timedelta(seconds=10)
    bundle = tmp_path / "freeze"
    bundle.mkdir()
    freeze_ns = str(int(freeze.timestamp()) * 1_000_000_000)
    (bundle / "freeze.rego").write_text(FREEZE_RULE.replace("FREEZE_NS", freeze_ns))
    with running_api(migrated_db_url, clock=clock, policy_bundles=(bundle,)) as api:
        created(api, hardware("pool-a"))
        service = api.runtime.reevaluation
        assert service.run_sweep("schedule", trigger="test:before").counts.changed == 0
        clock.advance(20)
        assert service.run_sweep("schedule", trigger="test:after").counts.changed == 1
        decision = latest(api, "HardwareManifest", "pool-a")
        assert "org.freeze.after" in {v["rule"] for v in decision["violations"]}


def test_a_failed_batch_write_pauses_the_sweep_where_it_failed(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep's cursor commits with its batch: after a failed write it resumes at that
    batch, and the batches before it are not written again."""
    fleet(api)
    service = api.runtime.reevaluation
    assert service.wait_idle()  # the pools' own sweeps
    service.use_memos, service.batch_size = False, 1
    written: list[str] = []

    def second_fails(session: Any, batch: Batch, now: datetime) -> Any:
        if batch.sweep is not None:
            written.append(batch.sweep.cursor[1])
            if len(written) == 2:
                raise OperationalError("UPDATE sweeps", {}, Exception("disk full"))
        return apply_batch(session, batch, now)

    monkeypatch.setattr(writer, "apply_batch", second_fails)
    with pytest.raises(SweepPaused):
        service.run_sweep("schedule", trigger="test:fails")
    with api.runtime.db.connect() as connection:
        stopped = connection.execute(
            text("SELECT evaluated, cursor_name FROM sweeps WHERE trigger = 'test:fails'")
        ).one()
    assert tuple(stopped) == (1, written[0])

    assert service.run_sweep("schedule", trigger="test:fails").counts.evaluated == 4
    assert written[1] == written[2]  # the failed batch again, then the rest once each
    assert len(written) == 5
