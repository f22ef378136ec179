"""Two sweep speed devices on and off in the same run (issue 24 part 4), on PostgreSQL.

Run: python -m bench.bench_sweep_devices [--manifests 3000] [--rounds 3]

A fleet of --manifests (bench/sweep_data.py) is tracked and swept once; then matrix sweeps
that flip sm90 back and forth (each records about a third of the fleet's decisions and a memo
for every manifest) are timed with each device on and off in turn, the order alternating
from round to round:
- the pool cache (`reevaluation/source.py` `_pools`): off, every batch reads and decodes the
  pools its deployments name afresh;
- the `unnest` upsert of sweep memos (`ledger/sweeps.py` `save_memos`): off, the plain
  `INSERT ... ON CONFLICT` executemany the other databases use.
The figure is the sweep's cost: CPU of this process (every thread: reader, evaluation,
writer) per manifest, and wall time, the median over rounds. The machine is shared, so CPU
time is the one to read. Devices are switched by monkeypatching, in this bench only.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from sqlalchemy import text
from sqlmodel import Session

from bench.sweep_data import insert_fleet, sm90_matrix
from supportgate.config import Settings
from supportgate.ledger import sweeps as memo_rows
from supportgate.ledger.batches import SweepMemo
from supportgate.reevaluation import source
from supportgate.runtime import Runtime
from tests.services import postgres_admin_url, temporary_database


def _fresh_pools(session: Session, names: set[str], cache: Any) -> Any:
    return _cached_pools(session, names, {})


def _plain_memos(session: Session, memos: Sequence[SweepMemo]) -> None:
    if not memos:
        return
    rows = [
        {"kind": m.kind, "name": m.name, "key": m.key, "stable_until": m.stable_until}
        for m in memos
    ]
    statement = memo_rows._insert(session)(memo_rows._memos)
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["kind", "name"],
            set_={"key": statement.excluded.key, "stable_until": statement.excluded.stable_until},
        ),
        rows,
    )


_cached_pools = source._pools
_OFF: dict[str, tuple[Any, str, Callable[..., Any]]] = {
    "pool cache": (source, "_pools", _fresh_pools),
    "unnest memo upsert": (memo_rows, "save_memos", _plain_memos),
}


@contextmanager
def _device(name: str, on: bool) -> Iterator[None]:
    module, attribute, plain = _OFF[name]
    device = getattr(module, attribute)
    if not on:
        setattr(module, attribute, plain)
    try:
        yield
    finally:
        setattr(module, attribute, device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    n = args.manifests
    samples: dict[tuple[str, bool], list[tuple[float, float]]] = {
        (name, on): [] for name in _OFF for on in (True, False)
    }
    with temporary_database(postgres_admin_url()) as url:
        runtime = Runtime.build(replace(Settings.from_env({}), database_url=url))
        runtime.prepare_database(upgrade_schema=True)
        runtime.ledger.start()
        try:
            insert_fleet(runtime.db, n)
            with runtime.db.connect() as connection:
                connection.execution_options(isolation_level="AUTOCOMMIT").execute(
                    text("VACUUM ANALYZE manifests")
                )
            runtime.reevaluation.run_sweep("matrix", trigger="bench:initial")
            number = 0
            for round_ in range(args.rounds):
                for name in _OFF:
                    order = (True, False) if round_ % 2 == 0 else (False, True)
                    for on in order:
                        number += 1
                        matrix = sm90_matrix(f"2026.12.{number}", official=number % 2 == 1)
                        published = runtime.matrices.publish(matrix, published_by="bench")
                        with _device(name, on):
                            cpu, wall = time.process_time(), time.perf_counter()
                            view = runtime.reevaluation.run_sweep(
                                "matrix", trigger=f"matrix:{published.version}"
                            )
                            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                        samples[(name, on)].append((cpu, wall))
                        print(
                            f"round {round_ + 1} {name} {'on' if on else 'off'}: "
                            f"{cpu:.2f} s CPU, {wall:.2f} s wall, "
                            f"{view.counts.changed:,} decisions",
                            flush=True,
                        )
            with runtime.db.connect() as connection:
                memos = connection.execute(text("SELECT count(*) FROM sweep_memos")).scalar_one()
        finally:
            runtime.stop()
    print(
        f"\n### Sweep devices, {n:,} manifests, median of {args.rounds} rounds ({memos:,} memos)\n"
    )
    print("| device | CPU per manifest on | off | off/on | wall on | wall off | off/on |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in _OFF:
        on_cpu = statistics.median(cpu for cpu, _ in samples[(name, True)])
        off_cpu = statistics.median(cpu for cpu, _ in samples[(name, False)])
        on_wall = statistics.median(wall for _, wall in samples[(name, True)])
        off_wall = statistics.median(wall for _, wall in samples[(name, False)])
        print(
            f"| {name} | {on_cpu / n * 1e6:,.0f} µs | {off_cpu / n * 1e6:,.0f} µs "
            f"| {off_cpu / on_cpu:.2f}x | {on_wall:.2f} s | {off_wall:.2f} s "
            f"| {off_wall / on_wall:.2f}x |"
        )


if __name__ == "__main__":
    main()
