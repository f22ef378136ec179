"""Sweeps in real `supportgate serve` processes: publishing a matrix that makes sm90 official
turns the H100 verdicts within seconds (decisions and alerts seen by a procurement key); a
sweep killed with SIGKILL mid-way finishes in the next process without duplicate or missing
decisions; two processes on one PostgreSQL run a trigger's sweep once."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from sqlalchemy import text

from bench.sweep_data import insert_fleet, sm90_matrix_json
from service.audit.verify import verify_chain
from service.db import create_db_engine, session_factory

from ..server import Served, clean_env, make_keys, run_cli, serving
from ..services import temporary_database

T = TypeVar("T")
EXAMPLES = Path(__file__).resolve().parents[3] / "shared" / "examples"
H100 = {
    ("HardwareManifest", "h100-pool-a"),
    ("DeploymentManifest", "v41-flash-h100-trial"),
    ("DeploymentManifest", "v41-flash-h100-prod"),
}


def eventually(probe: Callable[[], T | None], *, timeout: float = 60.0) -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found is not None:
            return found
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def client(server: Served, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=30, headers={"Authorization": f"Bearer {key}"})


def scalar(url: str, sql: str, **params: Any) -> Any:
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(text(sql), params).scalar_one()
    finally:
        engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def served_db(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'supportgate.db'}"
        return
    with temporary_database(request.getfixturevalue("postgres_url")) as url:
        yield url


def test_publishing_sm90_turns_the_h100_verdicts_within_seconds(
    served_db: str, tmp_path: Path
) -> None:
    keys = make_keys(served_db)
    with serving(tmp_path, env=clean_env(SUPPORTGATE_DATABASE_URL=served_db)) as server:
        with client(server, keys["ci"]) as ci:
            for path in [*sorted(EXAMPLES.glob("hw-*.yaml")), *sorted(EXAMPLES.glob("dep-*.yaml"))]:
                posted = ci.post(
                    "/v1/evaluations",
                    content=path.read_bytes(),
                    headers={"Content-Type": "application/yaml"},
                )
                assert posted.status_code == 201, posted.text
        with client(server, keys["admin"]) as admin:
            published = admin.post(
                "/v1/matrix",
                content=sm90_matrix_json("2026.12.1"),
                headers={"Content-Type": "application/json"},
            )
            assert published.status_code == 201, published.text
        started = time.monotonic()
        with client(server, keys["procurement"]) as procurement:

            def h100_alerts() -> list[dict[str, Any]] | None:
                items: list[dict[str, Any]] = procurement.get("/v1/alerts").json()["items"]
                found = {(a["manifest"]["kind"], a["manifest"]["name"]) for a in items}
                return items if found >= H100 else None

            alerts = eventually(h100_alerts, timeout=10)
            assert time.monotonic() - started < 10
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


def _chain_intact(url: str) -> bool:
    engine = create_db_engine(url)
    try:
        return verify_chain(session_factory(engine)).intact
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_a_sweep_killed_mid_way_finishes_after_a_restart(postgres_url: str, tmp_path: Path) -> None:
    fleet = 6000
    with temporary_database(postgres_url) as url:
        keys = make_keys(url)
        db = create_db_engine(url)
        insert_fleet(db, fleet)
        db.dispose()
        env = clean_env(SUPPORTGATE_DATABASE_URL=url)
        with serving(tmp_path / "first", env=env) as server:
            with client(server, keys["admin"]) as admin:
                published = admin.post(
                    "/v1/matrix",
                    content=sm90_matrix_json("2026.12.1"),
                    headers={"Content-Type": "application/json"},
                )
                assert published.status_code == 201, published.text

            def part_done() -> int | None:
                done = scalar(url, "SELECT coalesce(max(evaluated), 0) FROM sweeps")
                return int(done) if done else None

            eventually(part_done, timeout=60)
            server.process.kill()  # SIGKILL: no shutdown, a batch may be half-evaluated
            server.process.wait(timeout=30)
        sweep_id, status, evaluated = _only_matrix_sweep(url)
        assert status == "running"
        assert 0 < evaluated < fleet, "the kill came too late to leave the sweep unfinished"
        decisions, distinct = _decisions_under(url, "2026.12.1")
        assert decisions == distinct == evaluated  # exactly the committed batches

        with (
            serving(tmp_path / "second", env=env) as server,
            client(server, keys["admin"]) as admin,
        ):

            def finished() -> dict[str, Any] | None:
                view: dict[str, Any] = admin.get(f"/v1/reevaluations/{sweep_id}").json()
                return view if view["status"] == "finished" else None

            view = eventually(finished, timeout=120)
        assert view["counts"] == {"evaluated": fleet, "changed": fleet, "failed": 0}
        assert _decisions_under(url, "2026.12.1") == (fleet, fleet)
        assert int(scalar(url, "SELECT count(*) FROM decisions")) == fleet
        stale = scalar(
            url,
            "SELECT count(*) FROM manifests m JOIN decisions d ON d.id = m.latest_decision_id"
            " WHERE d.matrix_version <> '2026.12.1'",
        )
        assert stale == 0
        assert _chain_intact(url)


def _only_matrix_sweep(url: str) -> tuple[str, str, int]:
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                text("SELECT id, status, evaluated FROM sweeps WHERE cause = 'matrix'")
            ).all()
    finally:
        engine.dispose()
    assert len(rows) == 1, rows
    return str(rows[0][0]), str(rows[0][1]), int(rows[0][2])


@pytest.mark.postgres
def test_two_processes_sweep_a_trigger_once(postgres_url: str, tmp_path: Path) -> None:
    fleet = 3000
    with temporary_database(postgres_url) as url:
        keys = make_keys(url)
        db = create_db_engine(url)
        insert_fleet(db, fleet)
        db.dispose()
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
            sweep_id = eventually(lambda: _matrix_sweep_id(url), timeout=60)
            with client(first, keys["admin"]) as admin:

                def finished() -> dict[str, Any] | None:
                    view: dict[str, Any] = admin.get(f"/v1/reevaluations/{sweep_id}").json()
                    return view if view["status"] == "finished" else None

                view = eventually(finished, timeout=120)
        assert view["counts"] == {"evaluated": fleet, "changed": fleet, "failed": 0}
        assert _decisions_under(url, "2026.12.1") == (fleet, fleet)
        assert int(scalar(url, "SELECT count(*) FROM sweeps WHERE cause = 'matrix'")) == 1
        assert _chain_intact(url)


def _matrix_sweep_id(url: str) -> str | None:
    found = scalar(url, "SELECT max(id) FROM sweeps WHERE cause = 'matrix'")
    return None if found is None else str(found)
