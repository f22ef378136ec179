"""Embedded engine: full decision cost against bare regorus, one at a time and batched; and
the policy memo on a repeated post of each example deployment.

Run: python -m bench.bench_engine [--loops N]
Baseline: the same policies and matrix in a bare regorus Engine, fed pre-serialised input JSON
(set_input_json + eval_rule_as_json), measured in the same process. The full cost starts from
validated manifest Structs and ends with Decision Structs.
Memo: each deployment posted again a minute later, N times (CI re-posting it), through the
memoized engine: its hit rate, and the cost of such a post against a miss (a memo that keeps
nothing, so every post is evaluated) in the same run.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta

import regorus

from bench.common import (
    EXAMPLE_TIME,
    Measurement,
    _duration,
    example_manifests,
    measure,
    table,
)
from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import HardwareManifest
from supportgate.matrix import load_matrix_file, prepare
from supportgate.policy import EmbeddedEngine, PolicyBundle
from supportgate.policy.engine import RESULT_RULE, LoadedMatrix
from supportgate.policy.inputs import HardwareLookup
from supportgate.policy.memo import MemoizedEngine


def run(loops: int) -> list[Measurement]:
    bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
    matrix = prepare(load_matrix_file(bundle.default_matrix_path))
    evaluator = Evaluator(EmbeddedEngine(bundle), matrix)
    hardware, deployments = example_manifests()
    pools = {m.metadata.name: m for m in hardware if isinstance(m, HardwareManifest)}
    at = datetime.fromisoformat(EXAMPLE_TIME)
    subjects = [Subject(m) for m in hardware + deployments] * loops
    ops = len(subjects)

    bare = regorus.Engine()
    for name, text in bundle.modules:
        bare.add_policy(name, text)
    bare.add_data_json('{"matrix":' + matrix.canonical.decode() + "}")
    raw_inputs = [
        evaluator.policy_input(s, evaluated_at=at, hardware=pools.get).canonical.decode()
        for s in subjects
    ]

    def bare_loop() -> None:
        for raw in raw_inputs:
            bare.set_input_json(raw)
            bare.eval_rule_as_json(RESULT_RULE)

    def full_single() -> None:
        for subject in subjects:
            evaluator.evaluate(subject, evaluated_at=at, hardware=pools.get)

    def full_batch() -> None:
        evaluator.evaluate_batch(subjects, evaluated_at=at, hardware=pools.get)

    return [
        measure("bare regorus eval (baseline)", bare_loop, ops=ops),
        measure("full decision, one at a time", full_single, ops=ops),
        measure("full decision, batch", full_batch, ops=ops),
    ]


def run_memo(loops: int) -> str:
    """A table: per example deployment, the memo's hit rate over `loops` re-posts a minute
    apart, and the cost of one against a miss."""
    bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
    matrix = prepare(load_matrix_file(bundle.default_matrix_path))
    hardware, deployments = example_manifests()
    pools = {m.metadata.name: m for m in hardware if isinstance(m, HardwareManifest)}
    start = datetime.fromisoformat(EXAMPLE_TIME)
    times = [start + timedelta(minutes=minute) for minute in range(loops)]
    lines = [
        "### Policy memo, a repeated post of each example deployment",
        "",
        "| deployment | hit rate | repeated post | miss | ratio to miss |",
        "|---|---:|---:|---:|---:|",
    ]
    for deployment in deployments:
        lines.append(_memo_row(bundle, matrix, Subject(deployment), times, pools.get))
    return "\n".join(lines)


def _memo_row(
    bundle: PolicyBundle,
    matrix: LoadedMatrix,
    subject: Subject,
    times: list[datetime],
    hardware: HardwareLookup,
) -> str:
    memo = MemoizedEngine(EmbeddedEngine(bundle), bundle)
    kept = Evaluator(memo, matrix)
    missing = Evaluator(MemoizedEngine(EmbeddedEngine(bundle), bundle, capacity=0), matrix)

    def post(evaluator: Evaluator) -> None:
        for at in times:
            evaluator.evaluate(subject, evaluated_at=at, hardware=hardware)

    post(kept)  # the first post is the miss every deployment pays once
    memo.hits = memo.misses = 0
    repeated = measure("repeated post", lambda: post(kept), ops=len(times))
    asked = memo.hits + memo.misses
    hit_rate = memo.hits / asked if asked else 0.0
    miss = measure("miss", lambda: post(missing), ops=len(times))
    return (
        f"| {subject.manifest.metadata.name} | {hit_rate:.0%} "
        f"| {_duration(repeated.seconds_per_op)} | {_duration(miss.seconds_per_op)} "
        f"| {repeated.seconds_per_op / miss.seconds_per_op:.2f}x |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=200)
    args = parser.parse_args()
    rows = run(args.loops)
    print(table("Embedded engine, the examples (per manifest)", rows, rows[0]))
    print()
    print(run_memo(args.loops))


if __name__ == "__main__":
    main()
