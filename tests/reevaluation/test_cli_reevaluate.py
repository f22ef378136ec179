"""`supportgate reevaluate` in a subprocess: prints the sweep id and counts, exit 0; what it
records is seen by the service's API. And the cron (SUPPORTGATE_REEVALUATE_CRON) fires a
`schedule` sweep by itself, once per due minute."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Row

from bench.sweep_data import insert_fleet
from supportgate.db import create_db_engine
from supportgate.db.migrate import upgrade

from ..api import running_api
from ..clock import FakeClock
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
    """The scheduler's clock is a fake one: the test moves it to the next minute and ticks, as
    the scheduler's wake-up at a cron instant does, rather than wait for the minute."""
    url = f"sqlite:///{tmp_path / 'supportgate.db'}"
    # Ten seconds into a minute: a start in its last second left less than the second the test
    # steps short of the next minute (it failed so in CI at hh:mm:59).
    clock = FakeClock(datetime.now(UTC).replace(second=10, microsecond=0))
    start = clock.now()
    minute = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    with running_api(url, reevaluate_cron="* * * * *", clock=clock) as api:

        def scheduled_sweeps() -> list[Row[Any]]:
            with api.runtime.db.connect() as connection:
                return list(
                    connection.exec_driver_sql(
                        "SELECT trigger, status FROM sweeps WHERE cause = 'schedule'"
                    )
                )

        clock.advance(minute - start - timedelta(seconds=1))
        api.runtime.sweeps.tick()
        assert scheduled_sweeps() == []  # not yet the minute

        clock.advance(1)
        api.runtime.sweeps.tick()
        [found] = wait_until(scheduled_sweeps, "a sweep started by the cron")
        trigger = found[0]
        assert trigger == f"schedule:{minute.isoformat().replace('+00:00', 'Z')}"

        clock.advance(timedelta(minutes=3, seconds=10))  # three instants missed: one sweep
        api.runtime.sweeps.tick()
        api.runtime.sweeps.tick()
        later = minute + timedelta(minutes=3)
        triggers = {row[0] for row in scheduled_sweeps()}
        assert triggers == {trigger, f"schedule:{later.isoformat().replace('+00:00', 'Z')}"}
