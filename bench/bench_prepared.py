"""The prepared matrix data on and off: a decision with data.supportgate.prepared made by
Python once per matrix (supportgate/policy/prepared.py, as the service runs) against the
same data derived from data.matrix by Rego in every query (tests/policies/prepared_in_rego.rego,
the plain path).

Run: python -m bench.bench_prepared [--loops N] [--repeats R]
The example manifests' policy inputs, evaluated by regorus on two engines holding the same
policies and matrix; the two take turns in each repeat, CPU time (process_time), median.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import regorus

from bench.common import EXAMPLE_TIME, _duration, example_manifests
from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import HardwareManifest
from supportgate.matrix import load_matrix_file, prepare
from supportgate.policy import EmbeddedEngine, PolicyBundle
from supportgate.policy.engine import RESULT_RULE

IN_REGO = Path(__file__).resolve().parents[1] / "tests" / "policies" / "prepared_in_rego.rego"


def _engine(bundle: PolicyBundle, data: str, *extra: Path) -> Any:
    engine = regorus.Engine()
    for name, text in bundle.modules:
        engine.add_policy(name, text)
    for path in extra:
        engine.add_policy(path.name, path.read_text())
    engine.add_data_json(data)
    return engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
    matrix = prepare(load_matrix_file(bundle.default_matrix_path))
    hardware, deployments = example_manifests()
    pools = {m.metadata.name: m for m in hardware if isinstance(m, HardwareManifest)}
    evaluator = Evaluator(EmbeddedEngine(bundle), matrix)
    at = datetime.fromisoformat(EXAMPLE_TIME)
    inputs = [
        evaluator.policy_input(Subject(m), evaluated_at=at, hardware=pools.get).canonical.decode()
        for m in hardware + deployments
    ] * args.loops
    engines = {
        "prepared by Python once per matrix (on)": _engine(bundle, matrix.data_json()),
        "derived by Rego in every query (off)": _engine(
            bundle, '{"matrix":' + matrix.canonical.decode() + "}", IN_REGO
        ),
    }
    answers = {}
    for name, engine in engines.items():
        engine.set_input_json(inputs[0])
        answers[name] = engine.eval_rule_as_json(RESULT_RULE)
    if len(set(answers.values())) != 1:
        raise SystemExit("the two engines decide differently")
    samples: dict[str, list[float]] = {name: [] for name in engines}
    for _ in range(args.repeats):
        for name, engine in engines.items():
            started = time.process_time()
            for raw in inputs:
                engine.set_input_json(raw)
                engine.eval_rule_as_json(RESULT_RULE)
            samples[name].append((time.process_time() - started) / len(inputs))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    baseline = next(iter(medians.values()))
    print(f"### Prepared matrix data, {len(inputs):,} decisions a repeat (CPU per decision)\n")
    print("| case | per decision | ratio |")
    print("|---|---:|---:|")
    for name, seconds in medians.items():
        print(f"| {name} | {_duration(seconds)} | {seconds / baseline:.2f}x |")


if __name__ == "__main__":
    main()
