"""The ledger writer's group commit on PostgreSQL, and what the tree costs of it per decision.

Run: python -m bench.bench_group_commit [--groups 200] [--group 32]

A scratch database is migrated and seeded as `serve` does; --group HardwareManifest decisions
(evaluated once, up front, with the names bench_api posts, so the tracked manifests are
updated as in its steady state; each group's decisions get new ids) are committed --groups
times with `writer.commit_group`, as the writer thread commits a group of requests: one
transaction with the head lock, the entries, the tree's nodes, the decision rows, the
tracked manifests and the head. Timed per decision: the whole commit (baseline), the part
in `log.append_entries` (entries, tree, head) and the part in `log.grow_tree` (the tree
alone: its frontier and its new nodes, hashed and stored), as CPU time of the writer's
thread (the database's own work is not in it), with the wall time beside it.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from unittest.mock import patch

import msgspec
import yaml

from bench.common import EXAMPLES
from supportgate.config import Settings
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.ledger import log, write
from supportgate.ledger.batches import Batch, DecisionWrite, Tracking
from supportgate.ledger.writer import commit_group
from supportgate.manifests import HardwareManifest, decode_manifest
from supportgate.policy.inputs import canonical_digest
from supportgate.runtime import Runtime
from tests.services import postgres_admin_url, temporary_database
from tests.signing import with_test_key


@dataclass
class _Timer:
    """CPU seconds of this thread spent in one function, summed over calls (CPU, not wall
    time: on a shared machine the wall time of a round trip says more about the neighbours)."""

    seconds: float = 0.0

    def wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - start

        return timed


def _writes(runtime: Runtime, count: int) -> list[DecisionWrite]:
    template = yaml.safe_load((EXAMPLES / "hw-h100-pool-a.yaml").read_text())
    template["spec"]["toolkit"]["version"] = "12.8"  # YAML read it as a float
    evaluator = Evaluator(runtime.engine, runtime.matrices.current().loaded)
    writes = []
    for index in range(count):
        template["metadata"]["name"] = f"bench-pool-{index:04d}"
        manifest = decode_manifest(msgspec.json.encode(template), fmt="json")
        assert isinstance(manifest, HardwareManifest)
        evaluation = evaluator.evaluate(Subject(manifest), evaluated_at=datetime.now(UTC))
        content = evaluation.policy_input.document["manifest"]
        tracking = Tracking(
            content=content,
            content_digest=canonical_digest(msgspec.json.encode(content, order="sorted")),
            owner=manifest.metadata.owner,
            hardware_ref=None,
        )
        writes.append(
            DecisionWrite(
                decision=evaluation.decision,
                policy_input=evaluation.policy_input.canonical.decode(),
                tracking=tracking,
            )
        )
    return writes


def _renamed(writes: list[DecisionWrite], round_: int) -> list[DecisionWrite]:
    """The same decisions under new ids (a decision id is unique)."""
    return [
        msgspec.structs.replace(
            write,
            decision=msgspec.structs.replace(
                write.decision, id=f"{write.decision.id[:24]}{round_:012d}"
            ),
        )
        for write in writes
    ]


@contextmanager
def _timed() -> Iterator[tuple[_Timer, _Timer]]:
    """Time log.append_entries (as write.py calls it) and log.grow_tree."""
    appends, trees = _Timer(), _Timer()
    with (
        patch.object(log, "grow_tree", trees.wrap(log.grow_tree)),
        patch.object(write, "append_entries", appends.wrap(log.append_entries)),
    ):
        yield appends, trees


def _run(
    runtime: Runtime, writes: list[DecisionWrite], groups: int, *, first: int
) -> dict[str, float]:
    with _timed() as (appends, trees):
        start, cpu = time.perf_counter(), time.thread_time()
        for round_ in range(first, first + groups):
            batches = [Batch(decisions=[write]) for write in _renamed(writes, round_)]
            outcomes = commit_group(runtime.sessions, batches, datetime.now(UTC))
            if any(isinstance(outcome, Exception) for outcome in outcomes):
                raise RuntimeError(f"a group failed: {outcomes[0]!r}")
        wall, total = time.perf_counter() - start, time.thread_time() - cpu
    decisions = groups * len(writes)
    return {
        "wall": wall / decisions,
        "commit": total / decisions,
        "append": appends.seconds / decisions,
        "tree": trees.seconds / decisions,
    }


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--group", type=int, default=32, help="decisions per group commit")
    args = parser.parse_args()
    with temporary_database(postgres_admin_url()) as url:
        settings = with_test_key(replace(Settings.from_env({}), database_url=url))
        runtime = Runtime.build(settings)
        runtime.prepare_database(upgrade_schema=True)
        try:
            writes = _writes(runtime, args.group)
            _run(runtime, writes, 20, first=0)  # warm-up: the manifests tracked
            case = _run(runtime, writes, args.groups, first=100_000)
        finally:
            runtime.db.dispose()
    print(
        f"### Group commits on PostgreSQL: {args.groups} groups of {args.group} decisions "
        "(per decision)\n"
    )
    print("| wall | writer CPU: whole commit (baseline) | append_entries | the tree | share |")
    print("|---:|---:|---:|---:|---:|")
    print(
        f"| {_us(case['wall'])} | {_us(case['commit'])} | {_us(case['append'])} "
        f"| {_us(case['tree'])} | {case['tree'] / case['commit']:.0%} |"
    )


if __name__ == "__main__":
    main()
