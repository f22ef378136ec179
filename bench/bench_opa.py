"""OPA engine: decisions/s one at a time and batched, beside a bare HTTP POST to OPA.

Run: python -m bench.bench_opa [--loops N] [--batch N]
Starts `opa run --server` on a loopback port, holding the service's signed bundle
(tests/opa.py). Baseline: a bare POST of pre-serialised input to OPA's data API
(`/v1/data/supportgate/decision/result`, under the bundle's own matrix, without the revision
check and the matrix the engine sends) over one keep-alive session.
"""

from __future__ import annotations

import argparse
from datetime import datetime

import requests

from bench.common import EXAMPLE_TIME, Measurement, example_manifests, measure, table
from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import HardwareManifest
from supportgate.matrix import load_matrix_file, prepare
from supportgate.policy import PolicyBundle
from tests.engines import opa_engine
from tests.opa import running_opa, shared_credentials
from tests.services import find_opa


def run(url: str, loops: int, batch: int) -> list[Measurement]:
    bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
    matrix = prepare(load_matrix_file(bundle.default_matrix_path))
    engine = opa_engine(url, bundle)
    evaluator = Evaluator(engine, matrix)
    hardware, deployments = example_manifests()
    pools = {m.metadata.name: m for m in hardware if isinstance(m, HardwareManifest)}
    at = datetime.fromisoformat(EXAMPLE_TIME)
    subjects = [Subject(m) for m in hardware + deployments] * loops
    bodies = [
        b'{"input":'
        + evaluator.policy_input(s, evaluated_at=at, hardware=pools.get).canonical
        + b"}"
        for s in subjects
    ]
    session = requests.Session()
    session.headers.update(shared_credentials().headers())
    endpoint = f"{url}/v1/data/supportgate/decision/result"

    def bare_posts() -> None:
        for body in bodies:
            session.post(
                endpoint, data=body, headers={"Content-Type": "application/json"}
            ).raise_for_status()

    def single() -> None:
        for subject in subjects:
            evaluator.evaluate(subject, evaluated_at=at, hardware=pools.get)

    def batched() -> None:
        for start in range(0, len(subjects), batch):
            evaluator.evaluate_batch(
                subjects[start : start + batch], evaluated_at=at, hardware=pools.get
            )

    ops = len(subjects)
    return [
        measure("bare HTTP POST to OPA data API (baseline)", bare_posts, ops=ops, repeats=3),
        measure("OpaEngine, one at a time", single, ops=ops, repeats=3),
        measure(f"OpaEngine, batches of {batch}", batched, ops=ops, repeats=3),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=50)
    parser.add_argument("--batch", type=int, default=100)
    args = parser.parse_args()
    opa = find_opa()
    if opa is None:
        raise SystemExit("no opa binary: run scripts/install --with-opa")
    with running_opa(opa) as server:
        rows = run(server.url, args.loops, args.batch)
    print(table("OPA server, the examples (per manifest)", rows, rows[0]))


if __name__ == "__main__":
    main()
