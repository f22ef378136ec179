"""The policy tree against the previous one (issue 13): full decisions on the examples.

Run: python -m bench.bench_policy_tree [--loops N] [--no-opa]
Baseline: the previous tree (tests/fixtures/policy_tree_v1), measured in the same run, the
same way: embedded engine (Evaluator.evaluate from validated Structs to Decisions), and OPA
(an OpaEngine per tree, each on its own `opa run --server` holding that tree's signed bundle).
The target is at most 0.4x for each engine. The trees take turns within each repeat, so that
a drifting load on a shared machine weighs on both alike.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path

from bench.common import EXAMPLE_TIME, Measurement, example_manifests, table
from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import HardwareManifest
from supportgate.matrix import load_matrix_file, prepare
from supportgate.policy import EmbeddedEngine, PolicyBundle, PolicyEngine
from supportgate.policy.opa import OpaEngine
from supportgate.policy.opa_bundle import BundleSigner, build_bundle, bundle_revision
from tests.opa import _opa_process, default_matrix_document, serving_bundle, shared_credentials
from tests.services import find_opa

ORACLE_DIR = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "policy_tree_v1"
TREES = (("previous tree", ORACLE_DIR), ("new tree", DEFAULT_POLICY_DIR))


def _rows(engine_name: str, engines: list[PolicyEngine], loops: int) -> list[Measurement]:
    bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
    matrix = prepare(load_matrix_file(bundle.default_matrix_path))
    hardware, deployments = example_manifests()
    pools = {m.metadata.name: m for m in hardware if isinstance(m, HardwareManifest)}
    at = datetime.fromisoformat(EXAMPLE_TIME)
    subjects = [Subject(m) for m in hardware + deployments] * loops
    operations: dict[str, Callable[[], None]] = {}
    for (tree, _), engine in zip(TREES, engines, strict=True):
        evaluator = Evaluator(engine, matrix)

        def one_at_a_time(evaluator: Evaluator = evaluator) -> None:
            for subject in subjects:
                evaluator.evaluate(subject, evaluated_at=at, hardware=pools.get)

        operations[f"{engine_name}, {tree}"] = one_at_a_time
    return _interleaved(operations, ops=len(subjects))


def _interleaved(
    operations: dict[str, Callable[[], None]], *, ops: int, repeats: int = 7
) -> list[Measurement]:
    """Median seconds per op of each operation, the trees taking turns in every repeat: on a
    shared machine the load drifts between runs, and turns give both trees the same drift."""
    for operation in operations.values():
        operation()  # warm-up: compile, caches, connections
    samples: dict[str, list[float]] = {name: [] for name in operations}
    for _ in range(repeats):
        for name, operation in operations.items():
            start = time.perf_counter()
            operation()
            samples[name].append((time.perf_counter() - start) / ops)
    return [Measurement(name, statistics.median(times)) for name, times in samples.items()]


@contextmanager
def _opa_engines(opa: str) -> Iterator[list[PolicyEngine]]:
    """An OpaEngine per tree, each on its own OPA holding that tree's bundle."""
    credentials = shared_credentials()
    signer = BundleSigner.from_file(credentials.signing_key)
    matrix = default_matrix_document(PolicyBundle.load(DEFAULT_POLICY_DIR))
    engines: list[PolicyEngine] = []
    with ExitStack() as stack:
        for _, directory in TREES:
            policies = PolicyBundle.load(directory)
            archive = build_bundle(policies, matrix, signer).archive
            service = stack.enter_context(serving_bundle(credentials, archive))
            server = stack.enter_context(
                _opa_process(opa, service, credentials, wait_for_bundle=True)
            )
            engine = OpaEngine(
                server.url,
                policies,
                bundle_revision=bundle_revision(policies, matrix),
                token=credentials.api_token,
            )
            stack.callback(engine.close)
            engines.append(engine)
        yield engines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=50)
    parser.add_argument("--no-opa", action="store_true")
    args = parser.parse_args()
    embedded: list[PolicyEngine] = [
        EmbeddedEngine(PolicyBundle.load(directory)) for _, directory in TREES
    ]
    rows = _rows("embedded", embedded, args.loops)
    print(table("Embedded engine, the examples (per manifest)", rows, rows[0]))
    if args.no_opa:
        return
    opa = find_opa()
    if opa is None:
        raise SystemExit("no opa binary: run scripts/install --with-opa")
    with _opa_engines(opa) as engines:
        rows = _rows("OPA", engines, max(1, args.loops // 5))
    print()
    print(table("OPA server, the examples (per manifest)", rows, rows[0]))


if __name__ == "__main__":
    main()
