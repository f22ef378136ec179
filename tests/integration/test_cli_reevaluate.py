"""`supportgate reevaluate` in a subprocess: prints the sweep id and counts, exit 0; what it
records is seen by the service's API. And the cron (SUPPORTGATE_REEVALUATE_CRON) fires a
`schedule` sweep by itself."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sqlalchemy import Row

from bench.sweep_data import insert_fleet
from supportgate.db import create_db_engine
from supportgate.db.migrate import upgrade

from ..api import running_api
from ..server import clean_env, run_cli
from ..waiting import wait_until

SUMMARY = re.compile(
    r"^sweep (?P<id>[0-9a-f-]{36}) finished: evaluated (?P<evaluated>\d+), "
    r"changed (?P<changed>\d+), failed (?P<failed>\d+)$"
)


def test_reevaluate_prints_the_sweep_and_its_counts(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'supportgate.db'}"
    upgrade(url)
    db = create_db_engine(url)
    insert_fleet(db, 40)
    db.dispose()
    env = clean_env(SUPPORTGATE_DATABASE_URL=url)

    first = run_cli(["reevaluate"], env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    found = SUMMARY.match(first.stdout.strip().splitlines()[-1])
    assert found is not None, first.stdout
    assert (found["evaluated"], found["changed"], found["failed"]) == ("40", "40", "0")

    again = run_cli(["reevaluate"], env=env, cwd=tmp_path)
    repeat = SUMMARY.match(again.stdout.strip().splitlines()[-1])
    assert repeat is not None, again.stdout
    assert repeat["id"] != found["id"]
    assert (repeat["evaluated"], repeat["changed"]) == ("40", "0")

    with running_api(url) as api:
        view = api.client.get(
            f"/v1/reevaluations/{found['id']}", headers=api.headers("admin")
        ).json()
        assert (view["status"], view["cause"]) == ("finished", "schedule")
        tracked = api.client.get("/v1/manifests", headers=api.headers("procurement")).json()
        assert all(item["latest_decision"]["cause"] == "schedule" for item in tracked["items"])


def test_the_cron_starts_a_scheduled_sweep(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'supportgate.db'}"
    with running_api(url, reevaluate_cron="* * * * *") as api:

        def scheduled_sweep() -> Row[Any] | None:
            with api.runtime.db.connect() as connection:
                return connection.exec_driver_sql(
                    "SELECT trigger, status FROM sweeps WHERE cause = 'schedule'"
                ).first()

        # An every-minute cron fires within 60 s; the limit leaves it some slack.
        found = wait_until(scheduled_sweep, "a sweep started by the cron", limit=75)
        assert str(found[0]).startswith("schedule:")
