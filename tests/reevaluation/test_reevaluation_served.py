"""Sweeps in real `supportgate serve` processes: publishing a matrix that makes sm90 official
turns the H100 verdicts through the sweep the publish starts (cause `matrix`: decisions and
alerts seen by a procurement key, before the wait for them gives up); a
sweep killed with SIGKILL mid-way finishes in the next process without duplicate or missing
decisions; two processes on one PostgreSQL run a trigger's sweep once."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, text

from bench.sweep_data import insert_fleet, sm90_matrix_json
from supportgate.audit.verify import verify_log
from supportgate.db import create_db_engine, session_factory

from ..examples import expected
from ..server import Served, clean_env, make_keys, run_cli, serving
from ..services import temporary_database
from ..signing import shared_verifier
from ..waiting import wait_until

H100 = {
    ("HardwareManifest", "h100-pool-a"),
    ("DeploymentManifest", "v41-flash-h100-trial"),
    ("DeploymentManifest", "v41-flash-h100-prod"),
}


SWEEP_LIMIT_S = 120.0  # a sweep of thousands of manifests on a busy machine


def client(server: Served, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=30, headers={"Authorization": f"Bearer {key}"})


@contextmanager
def engine(url: str) -> Iterator[Engine]:
    db = create_db_engine(url)
    try:
        yield db
    finally:
        db.dispose()


def scalar(url: str, sql: str, **params: Any) -> Any:
    with engine(url) as db, db.connect() as connection:
        return connection.execute(text(sql), params).scalar_one()


@contextmanager
def fleet_database(postgres_url: str, fleet: int) -> Iterator[tuple[str, dict[str, str]]]:
    """A new database with keys and `fleet` tracked manifests: (its URL, role -> key)."""
    with temporary_database(postgres_url) as url:
        keys = make_keys(url)
        with engine(url) as db:
            insert_fleet(db, fleet)
        yield url, keys


def publish_sm90(server: Served, admin_key: str) -> None:
    with client(server, admin_key) as admin:
        published = admin.post(
            "/v1/matrix",
            content=sm90_matrix_json("2026.12.1"),
            headers={"Content-Type": "application/json"},
        )
    assert published.status_code == 201, published.text


def finished_sweep(server: Served, admin_key: str, sweep_id: str) -> dict[str, Any]:
    with client(server, admin_key) as admin:

        def finished() -> dict[str, Any] | None:
            view: dict[str, Any] = admin.get(f"/v1/reevaluations/{sweep_id}").json()
            return view if view["status"] == "finished" else None

        return wait_until(finished, f"sweep {sweep_id} to finish", limit=SWEEP_LIMIT_S)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def served_db(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'supportgate.db'}"
        return
    with temporary_database(request.getfixturevalue("postgres_url")) as url:
        yield url


def test_publishing_sm90_turns_the_h100_verdicts_by_the_sweep_it_starts(
    served_db: str, tmp_path: Path
) -> None:
    keys = make_keys(served_db)
    with serving(tmp_path, env=clean_env(SUPPORTGATE_DATABASE_URL=served_db)) as server:
        with client(server, keys["ci"]) as ci:
            for path in expected().files:
                posted = ci.post(
                    "/v1/evaluations",
                    content=path.read_bytes(),
                    headers={"Content-Type": "application/yaml"},
                )
                assert posted.status_code == 201, posted.text
        publish_sm90(server, keys["admin"])
        with client(server, keys["procurement"]) as procurement:

            def h100_alerts() -> list[dict[str, Any]] | None:
                items: list[dict[str, Any]] = procurement.get("/v1/alerts").json()["items"]
                found = {(a["manifest"]["kind"], a["manifest"]["name"]) for a in items}
                return items if found >= H100 else None

            alerts = wait_until(h100_alerts, "alerts for the H100 manifests")
            for alert in alerts:
                assert (alert["to"], alert["cause"]) == ("supported", "matrix")
                kind, name = alert["manifest"]["kind"], alert["manifest"]["name"]
                tracked = procurement.get(f"/v1/manifests/{kind}/{name}").json()
                assert tracked["latest_decision"]["id"] == alert["decision_id"]
                assert tracked["latest_decision"]["verdict"] == "supported"
                assert tracked["latest_decision"]["matrix_version"] == "2026.12.1"
                audit = procurement.get(
                    "/v1/audit", params={"matrix_version": "2026.12.1", "name": name}
                ).json()["items"]
                assert [d["id"] for d in audit] == [alert["decision_id"]]
            rtx = procurement.get("/v1/manifests/HardwareManifest/rtx4090-workstation").json()
            assert rtx["latest_decision"]["verdict"] == "rejected"
            assert (
                rtx["latest_decision"]["matrix_version"] == "2026.12.1"
            )  # re-judged, same verdict
            assert {(a["manifest"]["kind"], a["manifest"]["name"]) for a in alerts} >= H100


def _decisions_under(url: str, version: str) -> tuple[int, int]:
    """(decisions under `version`, distinct manifests they name)."""
    total = scalar(url, "SELECT count(*) FROM decisions WHERE matrix_version = :v", v=version)
    distinct = scalar(
        url,
        "SELECT count(*) FROM (SELECT DISTINCT kind, name FROM decisions"
        " WHERE matrix_version = :v) AS named",
        v=version,
    )
    return int(total), int(distinct)


def _log_intact(url: str) -> bool:
    """The log holds: its entries, tree, head, every row that names an entry, and its
    checkpoints signed by the servers' key (the tests' own, on PostgreSQL). The fleet went
    into the tracked-manifest table behind the log (bench/sweep_data.insert_fleet, no
    submissions), so verify's last check, of that table against the state the log leads to,
    objects to the fleet's rows: that objection, and no other, is expected here."""
    with engine(url) as db:
        report = verify_log(session_factory(db), verifier=shared_verifier())
    if report.problem is None:
        return True
    return report.problem.what.startswith("the tracked-manifest table disagrees with the log")


@pytest.mark.postgres
def test_a_sweep_killed_mid_way_finishes_after_a_restart(postgres_url: str, tmp_path: Path) -> None:
    fleet = 6000
    with fleet_database(postgres_url, fleet) as (url, keys):
        env = clean_env(SUPPORTGATE_DATABASE_URL=url)
        with serving(tmp_path / "first", env=env) as server:
            publish_sm90(server, keys["admin"])
            wait_until(
                lambda: int(scalar(url, "SELECT coalesce(max(evaluated), 0) FROM sweeps")),
                "a first batch to be committed",
            )
            server.process.kill()  # SIGKILL: no shutdown, a batch may be half-evaluated
            server.process.wait(timeout=30)
        sweep_id, status, evaluated = _only_matrix_sweep(url)
        assert status == "running"
        assert 0 < evaluated < fleet, "the kill came too late to leave the sweep unfinished"
        decisions, distinct = _decisions_under(url, "2026.12.1")
        assert decisions == distinct == evaluated  # exactly the committed batches

        with serving(tmp_path / "second", env=env) as server:
            view = finished_sweep(server, keys["admin"], sweep_id)
        assert view["counts"] == {"evaluated": fleet, "changed": fleet, "failed": 0}
        assert _decisions_under(url, "2026.12.1") == (fleet, fleet)
        assert int(scalar(url, "SELECT count(*) FROM decisions")) == fleet
        stale = scalar(
            url,
            "SELECT count(*) FROM manifests m JOIN decisions d ON d.id = m.latest_decision_id"
            " WHERE d.matrix_version <> '2026.12.1'",
        )
        assert stale == 0
        assert _log_intact(url)


def _only_matrix_sweep(url: str) -> tuple[str, str, int]:
    with engine(url) as db, db.connect() as connection:
        rows = connection.execute(
            text("SELECT id, status, evaluated FROM sweeps WHERE cause = 'matrix'")
        ).all()
    assert len(rows) == 1, rows
    return str(rows[0][0]), str(rows[0][1]), int(rows[0][2])


@pytest.mark.postgres
def test_two_processes_sweep_a_trigger_once(postgres_url: str, tmp_path: Path) -> None:
    fleet = 3000
    with fleet_database(postgres_url, fleet) as (url, keys):
        env = clean_env(SUPPORTGATE_DATABASE_URL=url)
        matrix_file = tmp_path / "sm90.json"
        matrix_file.write_bytes(sm90_matrix_json("2026.12.1"))
        with (
            serving(tmp_path / "a", env=env) as first,
            serving(tmp_path / "b", env=env),
        ):
            # Published by a third process: both services learn of it on their own.
            published = run_cli(["matrix", "publish", str(matrix_file)], env=env, cwd=tmp_path)
            assert published.returncode == 0, published.stderr
            sweep_id = wait_until(lambda: _matrix_sweep_id(url), "the matrix sweep")
            view = finished_sweep(first, keys["admin"], sweep_id)
        assert view["counts"] == {"evaluated": fleet, "changed": fleet, "failed": 0}
        assert _decisions_under(url, "2026.12.1") == (fleet, fleet)
        assert int(scalar(url, "SELECT count(*) FROM sweeps WHERE cause = 'matrix'")) == 1
        assert _log_intact(url)


def _matrix_sweep_id(url: str) -> str | None:
    found = scalar(url, "SELECT max(id) FROM sweeps WHERE cause = 'matrix'")
    return None if found is None else str(found)
