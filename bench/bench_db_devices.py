"""The speed devices of supportgate/db/ on PostgreSQL, each measured on and off in one run.

Run: python -m bench.bench_db_devices [--manifests 3000] [--groups 40] [--rounds 5]
     [--audit-rows 300000]

Devices (switched here by patching, never by a product setting):
- copy: `db/bulk.py append_rows` COPYs rows; off, one executemany INSERT (its SQLite path).
- any (removed from the product, kept here to measure it): `db/keys.py one_of` sending one
  array parameter (`= ANY(:values)`) on PostgreSQL; off, the IN list it sends now.
- custom-plans: `-c plan_cache_mode=force_custom_plan` on every connection; off, the server's
  default (`auto`), by rewriting the connection options (the pool is renewed at each switch).

One scratch database, migrated, a fleet of --manifests tracked manifests (bench/sweep_data.py)
and a first sweep. Then per device, --rounds rounds, on and off in turns (on first in even
rounds): --groups group commits of 32 decisions (`writer.commit_group`, as the writer thread
commits requests: CPU per committed decision) and a matrix sweep flipping sm90 (its publication
included; every manifest evaluated and a third re-decided: CPU per manifest). CPU is this
process's `time.process_time` (request-free: the writer and the sweep's threads are in it)
and the PostgreSQL backends' user+system time from /proc; the machine is shared, so wall
time is not used. Medians over rounds.
With --audit-rows, custom plans are also measured where they were added (commit 59f43df):
the audit's first page of `verdict=rejected&since=<90 days ago>` over that many decisions
(bench/audit_data.py), 15 times on one connection (psycopg prepares on the 6th, the server may
go generic 5 runs later), the last 5 timed; on and off in turns.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest.mock import patch

from sqlalchemy import ARRAY, Engine, any_, bindparam, create_engine, event, insert, text
from sqlalchemy.pool import NullPool

from bench.audit_data import fill
from bench.bench_group_commit import _renamed, _writes
from bench.sweep_data import insert_fleet, sm90_matrix
from supportgate.alerts import repository as alerts_repository
from supportgate.audit.filters import AuditFilter
from supportgate.audit.repository import decisions_page
from supportgate.config import Settings
from supportgate.db import keys
from supportgate.db.engine import create_db_engine, session_factory, transaction
from supportgate.db.migrate import upgrade
from supportgate.ledger import decisions, log
from supportgate.ledger.batches import Batch
from supportgate.ledger.writer import commit_group
from supportgate.reevaluation import repository as reevaluation_repository
from supportgate.reevaluation import source
from supportgate.runtime import Runtime
from supportgate.waivers import repository as waivers_repository
from tests.services import postgres_admin_url, temporary_database
from tests.signing import with_test_key

TICK = os.sysconf("SC_CLK_TCK")
Switch = Callable[[Engine, bool], AbstractContextManager[None]]


@contextmanager
def copy_device(_engine: Engine, on: bool) -> Iterator[None]:
    def executemany(session: Any, table: Any, rows: list[dict[str, Any]]) -> None:
        if rows:
            session.execute(insert(table), rows)

    if on:
        yield
        return
    with (
        patch.object(log, "append_rows", executemany),
        patch.object(decisions, "append_rows", executemany),
        patch.object(alerts_repository, "append_rows", executemany),
    ):
        yield


@contextmanager
def any_device(_engine: Engine, on: bool) -> Iterator[None]:
    """On: the removed form, one array parameter on PostgreSQL; off: the IN list it uses now."""

    def array(_session: Any, column: Any, values: Any) -> Any:
        return column == any_(bindparam(None, sorted(set(values)), type_=ARRAY(column.type)))

    if not on:
        yield
        return
    with ExitStack() as stack:
        # in_keys calls keys.one_of; the others imported it by name
        for user in (keys, waivers_repository, reevaluation_repository, source):
            stack.enter_context(patch.object(user, "one_of", array))
        yield


def plan_mode_switch(engine: Engine) -> Switch:
    """Connections made after `engine.dispose()` get force_custom_plan or `auto`."""
    state = {"on": True}

    @event.listens_for(engine, "do_connect")
    def _options(_dialect: Any, _record: Any, _args: Any, cparams: dict[str, Any]) -> None:
        mode = "force_custom_plan" if state["on"] else "auto"
        cparams["options"] = cparams["options"].replace("force_custom_plan", mode)

    @contextmanager
    def switch(_engine: Engine, on: bool) -> Iterator[None]:
        state["on"] = on
        engine.dispose()
        with engine.connect() as connection:
            shown = connection.execute(text("SHOW plan_cache_mode")).scalar_one()
        assert shown == ("force_custom_plan" if on else "auto"), shown
        try:
            yield
        finally:
            state["on"] = True
            engine.dispose()

    return switch


def backend_cpu(engine: Engine) -> dict[int, float]:
    """CPU seconds so far of each backend of the engine's database (but the asking one, on a
    connection of its own)."""
    monitor = create_engine(engine.url, poolclass=NullPool)
    with monitor.connect() as connection:
        pids = connection.execute(
            text(
                "SELECT pid FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        ).scalars()
        spent = {}
        for pid in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except FileNotFoundError:
                continue
            spent[pid] = (int(fields[11]) + int(fields[12])) / TICK
    monitor.dispose()
    return spent


@contextmanager
def measured(engine: Engine, into: list[tuple[float, float]], count: int) -> Iterator[None]:
    """Appends (process CPU, backends' CPU) per unit of `count` spent in the block."""
    before, cpu = backend_cpu(engine), time.process_time()
    yield
    cpu = time.process_time() - cpu
    after = backend_cpu(engine)
    backends = sum(after[pid] - before.get(pid, 0.0) for pid in after)
    into.append((cpu / count, backends / count))


_GROUPS_COMMITTED = itertools.count(1)


def _commit_groups(runtime: Runtime, writes: list[Any], groups: int) -> None:
    """`groups` group commits of `writes`, each under ids not used before."""
    edge = log.TreeEdge()
    for round_ in itertools.islice(_GROUPS_COMMITTED, groups):
        batches = [Batch(decisions=[write]) for write in _renamed(writes, round_)]
        outcomes = commit_group(runtime.sessions, batches, datetime.now(UTC), edge)
        if any(isinstance(outcome, Exception) for outcome in outcomes):
            raise RuntimeError(f"a group failed: {outcomes[0]!r}")


class Sweeps:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime, self.number = runtime, 0

    def run(self) -> int:
        self.number += 1
        matrix = sm90_matrix(f"2027.1.{self.number}", official=self.number % 2 == 1)
        published = self.runtime.matrices.publish(matrix, published_by="bench")
        view = self.runtime.reevaluation.run_sweep("matrix", trigger=f"matrix:{published.version}")
        return view.counts.evaluated


def _device_rounds(
    runtime: Runtime, switch: Switch, args: argparse.Namespace, writes: list[Any], sweeps: Sweeps
) -> dict[str, dict[bool, list[tuple[float, float]]]]:
    found: dict[str, dict[bool, list[tuple[float, float]]]] = {
        "commit": {True: [], False: []},
        "sweep": {True: [], False: []},
    }
    decisions_per_round = args.groups * len(writes)
    for number in range(args.rounds):
        for on in (True, False) if number % 2 == 0 else (False, True):
            with switch(runtime.db, on):
                with measured(runtime.db, found["commit"][on], decisions_per_round):
                    _commit_groups(runtime, writes, args.groups)
                evaluated: list[int] = []
                spent: list[tuple[float, float]] = []
                with measured(runtime.db, spent, 1):
                    evaluated.append(sweeps.run())
                cpu, backends = spent[0]
                found["sweep"][on].append((cpu / evaluated[0], backends / evaluated[0]))
    return found


def _median(pairs: list[tuple[float, float]], index: int) -> float:
    return statistics.median(pair[index] for pair in pairs)


def _print_device(name: str, found: dict[str, dict[bool, list[tuple[float, float]]]]) -> None:
    for workload, unit in (("commit", "decision committed"), ("sweep", "manifest swept")):
        on, off = found[workload][True], found[workload][False]
        for label, index in (("process", 0), ("backends", 1), ("all", None)):
            if index is None:
                on_us = (_median(on, 0) + _median(on, 1)) * 1e6
                off_us = (_median(off, 0) + _median(off, 1)) * 1e6
            else:
                on_us, off_us = _median(on, index) * 1e6, _median(off, index) * 1e6
            saved = 1 - on_us / off_us if off_us else 0.0
            print(
                f"| {name} | CPU µs per {unit}, {label} | {on_us:,.0f} | {off_us:,.0f} "
                f"| {saved:+.0%} |"
            )


def _audit(admin_url: str, rows: int, rounds: int) -> None:
    with temporary_database(admin_url) as url:
        upgrade(url)
        filled = fill(url, rows, now=datetime.now(UTC))
        engine = create_db_engine(url)
        switch = plan_mode_switch(engine)
        sessions = session_factory(engine)
        where = AuditFilter(verdict="rejected", since=datetime.now(UTC) - timedelta(days=90))
        times: dict[bool, list[float]] = {True: [], False: []}
        for number in range(rounds):
            for on in (True, False) if number % 2 == 0 else (False, True):
                with switch(engine, on):
                    taken = []
                    for _ in range(15):
                        started = time.perf_counter()
                        with transaction(sessions) as session:
                            page = decisions_page(session, where, before_seq=None, limit=50)
                        taken.append(time.perf_counter() - started)
                        assert len(page) == 50
                    times[on].append(statistics.median(taken[-5:]))
        engine.dispose()
    on_ms = statistics.median(times[True]) * 1e3
    off_ms = statistics.median(times[False]) * 1e3
    print(
        f"| custom-plans | audit first page, {filled.decisions:,} decisions, ms (wall, median "
        f"of runs 11-15, median of {rounds} rounds) | {on_ms:,.1f} | {off_ms:,.1f} "
        f"| {off_ms / on_ms:.1f}x faster on |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifests", type=int, default=3000)
    parser.add_argument("--groups", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--devices", default="copy,any,custom-plans")
    parser.add_argument("--audit-rows", type=int, default=0)
    args = parser.parse_args()
    admin_url = postgres_admin_url()
    print("| device | figure | on | off | on saves |")
    print("|---|---|---:|---:|---:|")
    with temporary_database(admin_url) as url:
        settings = with_test_key(replace(Settings.from_env({}), database_url=url))
        runtime = Runtime.build(settings)
        runtime.prepare_database(upgrade_schema=True)
        runtime.ledger.start()
        try:
            insert_fleet(runtime.db, args.manifests)
            with runtime.db.connect() as connection:
                connection.execution_options(isolation_level="AUTOCOMMIT").execute(
                    text("VACUUM ANALYZE manifests")
                )
            runtime.reevaluation.run_sweep("matrix", trigger="bench:initial")
            writes = _writes(runtime, 32)
            _commit_groups(runtime, writes, 10)
            sweeps = Sweeps(runtime)
            switches: dict[str, Switch] = {
                "copy": copy_device,
                "any": any_device,
                "custom-plans": plan_mode_switch(runtime.db),
            }
            for name in args.devices.split(","):
                found = _device_rounds(runtime, switches[name], args, writes, sweeps)
                _print_device(name, found)
        finally:
            runtime.stop()
    if args.audit_rows:
        _audit(admin_url, args.audit_rows, args.rounds)


if __name__ == "__main__":
    main()
