"""The policy tree against a baseline tree: full decisions on the examples.

Run: python -m bench.bench_policy_tree [--loops N] [--no-opa] [--cpu] [--baseline REV]
Baseline: the tree of commit REV (tests/policy_trees.py; by default the tree before CONTRACT
section 10), measured in the same run, the
same way. The trees take turns within each repeat, so that a drifting load on a shared
machine weighs on both alike. Four measures, each per decision:

- embedded, full decision: Evaluator.evaluate, from validated Structs to Decisions;
- embedded, policy only: EmbeddedEngine.evaluate on inputs built beforehand (regorus's
  evaluation and the decoding of its answer);
- OPA, full decision: an OpaEngine per tree, each on its own `opa run --server` holding that
  tree's signed bundle (the HTTP round trip included);
- OPA, evaluation only: the `timer_rego_query_eval_ns` OPA reports for the same requests.

Issue 13's target is at most 0.4x for each engine. A third tree, the decision without its
concerns (the new tree with its deny and warn unions emptied), shows the part of that cost no
restructuring of the concerns can remove: docs/policy-interface.md "What a decision costs".
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import tempfile
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
from supportgate.policy.engine import LoadedMatrix
from supportgate.policy.inputs import PolicyInput
from supportgate.policy.opa import GATE_PATH, OpaEngine
from supportgate.policy.opa_bundle import BundleSigner, build_bundle, bundle_revision
from tests.opa import _opa_process, default_matrix_document, serving_bundle, shared_credentials
from tests.policy_trees import BASELINE_REV, baseline_tree
from tests.services import find_opa

DECISION_MODULE = Path("supportgate") / "decision" / "decision.rego"
_UNION = r"(?ms)^(?P<name>denies|warns) := union\(\{$.*?^\}\)$"


def shell_tree(directory: Path) -> Path:
    """A copy of the new tree whose decision reads no concern: the cost every decision pays
    before any concern judges anything."""
    target = directory / "shell"
    shutil.copytree(DEFAULT_POLICY_DIR, target)
    module = target / DECISION_MODULE
    text, emptied = re.subn(_UNION, r"\g<name> := set()", module.read_text())
    if emptied != 2:
        raise SystemExit(f"{module}: expected the denies and warns unions, found {emptied}")
    module.write_text(text)
    return target


class Examples:
    """The example manifests, their matrix and the policy inputs the evaluator makes of them."""

    def __init__(self, loops: int) -> None:
        bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
        self.matrix: LoadedMatrix = prepare(load_matrix_file(bundle.default_matrix_path))
        hardware, deployments = example_manifests()
        self.pools = {m.metadata.name: m for m in hardware if isinstance(m, HardwareManifest)}
        self.at = datetime.fromisoformat(EXAMPLE_TIME)
        examples = [Subject(m) for m in hardware + deployments]
        builder = Evaluator(EmbeddedEngine(bundle), self.matrix)
        # One input per example manifest; the loops repeat them.
        self.distinct_inputs: list[PolicyInput] = [
            builder.policy_input(subject, evaluated_at=self.at, hardware=self.pools.get)
            for subject in examples
        ]
        self.subjects = examples * loops
        self.inputs = self.distinct_inputs * loops

    def full_decisions(self, engine: PolicyEngine) -> Callable[[], None]:
        evaluator = Evaluator(engine, self.matrix)

        def run() -> None:
            for subject in self.subjects:
                evaluator.evaluate(subject, evaluated_at=self.at, hardware=self.pools.get)

        return run

    def policy_only(self, engine: PolicyEngine) -> Callable[[], None]:
        def run() -> None:
            for policy_input in self.inputs:
                engine.evaluate(self.matrix, policy_input)

        return run


def interleaved(
    operations: dict[str, Callable[[], None]],
    *,
    ops: int,
    repeats: int = 7,
    clock: Callable[[], float] = time.perf_counter,
) -> list[Measurement]:
    """Median seconds per op of each operation, the trees taking turns in every repeat: on a
    shared machine the load drifts between runs, and turns give both trees the same drift."""
    for operation in operations.values():
        operation()  # warm-up: compile, caches, connections
    samples: dict[str, list[float]] = {name: [] for name in operations}
    for _ in range(repeats):
        for name, operation in operations.items():
            start = clock()
            operation()
            samples[name].append((clock() - start) / ops)
    return [Measurement(name, statistics.median(times)) for name, times in samples.items()]


def opa_evaluation_times(
    examples: Examples, engines: dict[str, OpaEngine], repeats: int
) -> list[Measurement]:
    """The median of OPA's own evaluation timer per decision, for each tree in turn. (The
    request is the one OpaEngine.evaluate sends, with ?metrics=true.)"""
    samples: dict[str, list[float]] = {name: [] for name in engines}
    for _ in range(repeats):
        for policy_input in examples.distinct_inputs:
            for name, engine in engines.items():
                body = engine._gate_body(examples.matrix, policy_input.canonical)
                answer = engine._call("POST", f"{GATE_PATH}?metrics=true", body)
                samples[name].append(answer["metrics"]["timer_rego_query_eval_ns"] / 1e9)
    return [Measurement(name, statistics.median(times)) for name, times in samples.items()]


@contextmanager
def opa_engines(trees: dict[str, Path]) -> Iterator[dict[str, OpaEngine]]:
    """An OpaEngine per tree, each on its own OPA holding that tree's bundle."""
    opa = find_opa()
    if opa is None:
        raise SystemExit("no opa binary: run scripts/install --with-opa")
    credentials = shared_credentials()
    signer = BundleSigner.from_file(credentials.signing_key)
    matrix = default_matrix_document(PolicyBundle.load(DEFAULT_POLICY_DIR))
    engines: dict[str, OpaEngine] = {}
    with ExitStack() as stack:
        for name, directory in trees.items():
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
            engines[name] = engine
        yield engines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=50)
    parser.add_argument("--no-opa", action="store_true")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="the embedded engine timed in CPU time: a loaded machine inflates wall time",
    )
    parser.add_argument("--baseline", default=BASELINE_REV, help="the commit of the baseline tree")
    args = parser.parse_args()
    # regorus takes a backtrace for each error it builds and drops when this is set, which
    # moves the trees' costs apart (docs/performance.md, session 29): say which was measured.
    print(f"RUST_BACKTRACE={os.environ.get('RUST_BACKTRACE', '(unset)')}\n")
    with tempfile.TemporaryDirectory() as scratch:
        trees = {
            "baseline tree": baseline_tree(args.baseline, Path(scratch)),
            "new tree": DEFAULT_POLICY_DIR,
            "new tree without its concerns": shell_tree(Path(scratch)),
        }
        examples = Examples(args.loops)
        embedded = {name: EmbeddedEngine(PolicyBundle.load(path)) for name, path in trees.items()}
        ops = len(examples.subjects)
        for title, make in (
            ("Embedded engine, full decision", examples.full_decisions),
            ("Embedded engine, policy only", examples.policy_only),
        ):
            operations = {name: make(engine) for name, engine in embedded.items()}
            clock = time.process_time if args.cpu else time.perf_counter
            rows = interleaved(operations, ops=ops, repeats=11 if args.cpu else 7, clock=clock)
            print(table(f"{title} (per manifest)", rows, rows[0]), end="\n\n")
        if args.no_opa:
            return
        opa_examples = Examples(max(1, args.loops // 5))
        with opa_engines(trees) as engines:
            full = {name: opa_examples.full_decisions(engine) for name, engine in engines.items()}
            rows = interleaved(full, ops=len(opa_examples.subjects))
            print(table("OPA server, full decision (per manifest)", rows, rows[0]), end="\n\n")
            rows = opa_evaluation_times(opa_examples, engines, repeats=max(1, args.loops // 5))
            print(table("OPA server, evaluation only (timer_rego_query_eval_ns)", rows, rows[0]))


if __name__ == "__main__":
    main()
