"""Re-evaluation sweeps on PostgreSQL: a matrix change over a large tracked fleet, end to end,
against the engine's batch cost over the same subjects; then a no-change scheduled sweep.

Run: python -m bench.bench_sweep [--manifests 100000] [--batch 500] [--baseline REV]
Needs PostgreSQL (started like the tests start it; a scratch database is made and dropped).

1. --manifests tracked manifests (bench/sweep_data.py: one pool in ten, H100 / B200 / H100 /
   Ascend pools in turn, deployments referencing them) are COPYed into a migrated database, and a
   first sweep records their decisions under the default matrix (timed, not compared).
2. A matrix that makes sm90 official is published (about a third of the verdicts flip).
   Baseline: Evaluator.evaluate_batch over the very subjects the sweep will evaluate, batch by
   batch, timing only that call. Then the sweep (cause `matrix`): wall time until its last
   batch is committed (decisions, alerts, tracked manifests, cursor; written by the ledger's
   writer thread, as in `serve`), and the growth of the resident memory of this process and
   its children (sampled every 20 ms) over its start. Two such sweeps, the matrix flipping
   sm90 on and off again (each a new version, each recording every decision), each against a
   baseline under its own matrix: the second matrix's decisions carry twice the violations and
   cost 14-25% more to evaluate (docs/performance.md, session 30); the better ratio is named.
3. A scheduled sweep over the same, unchanged fleet (cause `schedule`), with the sweep memo
   and without it (ReevaluationService.use_memos: every manifest evaluated), against the
   baseline and the matrix sweep under the matrix in force, the second.
Targets: changing sweep per manifest <= 1.5x the engine batch cost; memory growth < 200 MB;
no-change sweep >= 3x faster than the changing one.
With --baseline REV, all of it runs first under the policy tree of commit REV
(tests/policy_trees.py) on its own scratch database, then under the current one, and the two
sweeps' manifests/s are compared.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TypeVar

from sqlalchemy import text

from bench.common import children, cpu_seconds
from bench.sweep_data import insert_fleet, sm90_matrix
from supportgate.config import DEFAULT_POLICY_DIR, Settings
from supportgate.evaluations.evaluator import Evaluator
from supportgate.policy import EmbeddedEngine, PolicyBundle
from supportgate.reevaluation.source import SWEEP_BATCH_SIZE, iter_tracked_batches, subjects
from supportgate.reevaluation.views import SweepView
from supportgate.runtime import Runtime
from tests.policy_trees import BASELINE_REV, baseline_tree
from tests.services import postgres_admin_url, temporary_database

T = TypeVar("T")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _cpu() -> float:
    """CPU seconds of this process and of its children (the evaluation process) so far."""
    return time.process_time() + sum(map(cpu_seconds, children()))


def _rss() -> int:
    """Resident memory of this process and its children."""
    total = 0
    for pid in ["self", *children()]:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (FileNotFoundError, ProcessLookupError):
            continue  # a child that ended meanwhile
    return total


@dataclass
class Run:
    seconds: float
    rss_growth: int
    cpu: float = 0.0  # CPU seconds of every thread (the sweep's, the writer's) and the child


@contextmanager
def _watched() -> Iterator[Run]:
    """Wall time and peak RSS growth of the block (sampled every 20 ms)."""
    run = Run(seconds=0.0, rss_growth=0)
    start_rss, stop = _rss(), threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            run.rss_growth = max(run.rss_growth, _rss() - start_rss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started, cpu = time.perf_counter(), _cpu()
    try:
        yield run
    finally:
        run.seconds = time.perf_counter() - started
        run.cpu = _cpu() - cpu
        stop.set()
        sampler.join()
        run.rss_growth = max(run.rss_growth, _rss() - start_rss)


def _timed(work: Callable[[], T]) -> tuple[T, Run]:
    with _watched() as run:
        result = work()
    return result, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifests", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=SWEEP_BATCH_SIZE)
    parser.add_argument(
        "--baseline",
        nargs="?",
        const=BASELINE_REV,
        help="run it all under the policy tree of this commit too, and compare",
    )
    parser.add_argument(
        "--evaluation-process",
        choices=("on", "off"),
        default="on",
        help="the service's evaluations in a child process (its default) or in its own",
    )
    args = parser.parse_args()
    trees = [("policy tree", DEFAULT_POLICY_DIR)]
    scratch = tempfile.TemporaryDirectory()
    if args.baseline:
        trees.insert(0, ("baseline tree", baseline_tree(args.baseline, Path(scratch.name))))
    speeds = []
    for name, policy_dir in trees:
        speeds.append(
            _sweeps(args.manifests, args.batch, policy_dir, name, args.evaluation_process == "on")
        )
        print()
    if args.baseline:
        (old_matrix, old_quiet), (new_matrix, new_quiet) = speeds
        print("### The policy tree against the baseline (same run, manifests/s)\n")
        print("| sweep | baseline tree | policy tree | ratio of times |")
        print("|---|---:|---:|---:|")
        for sweep, old, new in (
            ("matrix", old_matrix, new_matrix),
            ("no change", old_quiet, new_quiet),
        ):
            print(f"| {sweep} | {old:,.0f} | {new:,.0f} | {old / new:.2f}x |")


def _sweeps(
    n: int, batch: int, policy_dir: Path, tree: str, evaluation_process: bool
) -> tuple[float, float]:
    """The sweeps on a scratch database; prints their table, returns the matrix and the
    no-change sweeps' manifests per second. The sweep memo, a speed device, is measured on and
    off in the same run on no-change sweeps."""
    with temporary_database(postgres_admin_url()) as url:
        settings = replace(
            Settings.from_env({}),
            database_url=url,
            policy_dir=policy_dir,
            evaluation_process=evaluation_process,
        )
        runtime = Runtime.build(settings)
        runtime.prepare_database(upgrade_schema=True)
        runtime.ledger.start()  # as `serve` does
        sweeps = runtime.reevaluation
        sweeps.batch_size = batch
        try:
            _, fill = _timed(lambda: insert_fleet(runtime.db, n))
            with runtime.db.connect() as connection:
                connection.execution_options(isolation_level="AUTOCOMMIT").execute(
                    text("VACUUM ANALYZE manifests")
                )
            initial, first = _timed(lambda: sweeps.run_sweep("matrix", trigger="bench:initial"))
            engine_seconds: list[float] = []  # each matrix's, in publication order
            engine_cpu: list[float] = []
            matrix_runs: list[tuple[SweepView, Run]] = []
            for number in (1, 2):
                matrix = sm90_matrix(f"2026.12.{number}", official=number % 2 == 1)
                published = runtime.matrices.publish(matrix, published_by="bench")
                seconds, cpu = _engine_cost(runtime, policy_dir, published.loaded, batch)
                engine_seconds.append(seconds)
                engine_cpu.append(cpu)
                matrix_runs.append(
                    _timed(
                        partial(sweeps.run_sweep, "matrix", trigger=f"matrix:{published.version}")
                    )
                )
            with runtime.db.connect() as connection:
                alerts = connection.execute(text("SELECT count(*) FROM alerts")).scalar_one()
            quiet_runs = {}
            for use_memos in (True, False):
                sweeps.use_memos = use_memos
                again = partial(sweeps.run_sweep, "schedule", trigger=f"bench:memo-{use_memos}")
                quiet_runs[use_memos] = _timed(again)
            sweeps.use_memos = True
        finally:
            runtime.stop()
    ratios = [
        run.seconds / engine for (_, run), engine in zip(matrix_runs, engine_seconds, strict=True)
    ]
    best = ratios.index(min(ratios))
    changing = matrix_runs[best][0]
    same = matrix_runs[-1][1]  # the changing sweep under the no-change sweeps' matrix
    (quiet, still), (_, unmemo) = quiet_runs[True], quiet_runs[False]
    rows = [
        ("insert the fleet (COPY)", fill, n, None),
        (f"first sweep ({initial.counts.changed:,} decisions)", first, n, None),
        *(
            (
                f"engine: Evaluator.evaluate_batch only, matrix {number}",
                Run(seconds, 0, cpu),
                n,
                1.0,
            )
            for number, (seconds, cpu) in enumerate(zip(engine_seconds, engine_cpu, strict=True), 1)
        ),
        *(
            (f"matrix sweep {number} ({view.counts.changed:,} decisions)", run, n, ratio)
            for number, ((view, run), ratio) in enumerate(zip(matrix_runs, ratios, strict=True), 1)
        ),
        (
            f"no-change scheduled sweep ({quiet.counts.changed} decisions), memo on",
            still,
            n,
            still.seconds / engine_seconds[-1],
        ),
        ("no-change scheduled sweep, memo off", unmemo, n, unmemo.seconds / engine_seconds[-1]),
    ]
    print(f"### Sweeps over {n:,} tracked manifests on PostgreSQL (batch {batch}), {tree}\n")
    print("| case | total | per manifest | manifests/s | RSS growth | ratio to engine | CPU |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, run, count, ratio in rows:
        shown = "" if ratio is None else f"{ratio:.2f}x"
        growth = f"{run.rss_growth / 2**20:,.0f} MB" if run.rss_growth else ""
        print(
            f"| {name} | {run.seconds:,.1f} s | {run.seconds / count * 1e6:,.0f} µs "
            f"| {count / run.seconds:,.0f} | {growth} | {shown} | {run.cpu:,.1f} s |"
        )
    cpu_ratios = [run.cpu / cpu for (_, run), cpu in zip(matrix_runs, engine_cpu, strict=True)]
    print(
        f"\nbest matrix sweep: {ratios[best]:.2f}x its engine baseline (sweep {best + 1}); "
        f"no-change sweep {same.seconds / still.seconds:.1f}x faster than matrix sweep 2 (the "
        f"same matrix) with the memo, {same.seconds / unmemo.seconds:.1f}x without; "
        f"{changing.counts.changed:,} of {n:,} decisions changed under the new matrix "
        f"({alerts:,} alerts over all sweeps; failed: {changing.counts.failed}); in CPU "
        f"(this process and its evaluation process) against the engine's, the matrix sweeps "
        f"{', '.join(f'{ratio:.2f}x' for ratio in cpu_ratios)}"
    )
    fastest = min(run.seconds for _, run in matrix_runs)  # --baseline compares trees by it
    return n / fastest, n / still.seconds


def _engine_cost(
    runtime: Runtime, policy_dir: Path, matrix: object, batch_size: int
) -> tuple[float, float]:
    """Seconds (wall, then this process's CPU) spent in Evaluator.evaluate_batch over every
    tracked manifest, in batches, on an engine of its own."""
    engine = EmbeddedEngine(PolicyBundle.load(policy_dir))
    evaluator = Evaluator(engine, matrix)  # type: ignore[arg-type]
    spent = cpu = 0.0
    now = datetime.now(UTC)
    for batch in iter_tracked_batches(runtime.sessions, batch_size=batch_size):
        batch_subjects = subjects(batch, "matrix")
        started, cpu_started = time.perf_counter(), time.process_time()
        evaluator.evaluate_batch(batch_subjects, evaluated_at=now, hardware=batch.hardware)
        spent += time.perf_counter() - started
        cpu += time.process_time() - cpu_started
    return spent, cpu


if __name__ == "__main__":
    main()
