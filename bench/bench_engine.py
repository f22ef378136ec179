"""Embedded engine: full decision cost against bare regorus, one at a time and batched.

Run: python -m bench.bench_engine [--loops N]
Baseline: the same policies and matrix in a bare regorus Engine, fed pre-serialised input JSON
(set_input_json + eval_rule_as_json), measured in the same process. The full cost starts from
validated manifest Structs and ends with Decision Structs.
"""

from __future__ import annotations

import argparse
from datetime import datetime

import regorus

from bench.common import (
    EXAMPLE_TIME,
    Measurement,
    example_manifests,
    measure,
    table,
)
from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import HardwareManifest
from supportgate.matrix import load_matrix_file, prepare
from supportgate.policy import EmbeddedEngine, PolicyBundle
from supportgate.policy.engine import RESULT_RULE


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=200)
    args = parser.parse_args()
    rows = run(args.loops)
    print(table("Embedded engine, the examples (per manifest)", rows, rows[0]))


if __name__ == "__main__":
    main()
