"""The policies compare the evaluation time only where supportgate.policy.time_thresholds says
(evidence turning stale, waivers lapsing): the memos of decisions rely on it.

Two checks, both independent of how the Rego is written (rule names, files, helpers):
- in OPA's AST of every policy module, no call reads the clock (`time.now_ns`): the time
  comes from `input.evaluated_at` only;
- evaluated over times from 1680 to 2260 and around each known threshold, every example
  input (with waivers of the rules it fires, under a matrix that also carries a time of its
  own) gets the same decision between two consecutive known thresholds. A new comparison of
  the time, with an input time or a fixed date, changes a decision between two of them.
A failure means: teach time_thresholds the new comparison (and the memo keys on it).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import msgspec
import pytest

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import HardwareManifest, Manifest, decode_manifests, to_builtins
from supportgate.manifests.decision import Decision
from supportgate.policy import EmbeddedEngine, PolicyBundle
from supportgate.policy.engine import LoadedMatrix
from supportgate.policy.inputs import format_time
from supportgate.policy.time_thresholds import thresholds

from ..engines import default_matrix
from ..examples import EXAMPLES
from ..policy_examples import examples

CLOCK = {"now_ns"}  # the builtins of `time.` that read the clock
_MICROSECOND = timedelta(microseconds=1)
_WIDE = [datetime(year, 7, 1, tzinfo=UTC) for year in range(1680, 2261, 20)]
_NEAR_EXAMPLES = [
    datetime(2026, 11, 30, tzinfo=UTC) + timedelta(days=days) for days in range(-400, 401, 25)
]


def _refs(node: Any) -> Iterator[list[Any]]:
    if isinstance(node, dict):
        if node.get("type") == "ref" and isinstance(node.get("value"), list):
            yield node["value"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def test_no_policy_reads_the_clock(opa_binary: str, policy_bundle: PolicyBundle) -> None:
    found = []
    for name, _ in policy_bundle.modules:
        path = policy_bundle.directory / name
        parsed = subprocess.run(
            [opa_binary, "parse", "--format", "json", "--json-include", "locations", str(path)],
            capture_output=True,
            text=True,
            check=True,
        )
        for ref in _refs(json.loads(parsed.stdout)):
            head, *rest = ref
            reads_clock = head.get("value") == "time" and rest and rest[0].get("value") in CLOCK
            if head.get("type") == "var" and reads_clock:
                found.append(f"{name}:{rest[0]['location']['row']}: time.{rest[0]['value']}")
    assert found == [], "the evaluation time must come from input.evaluated_at"


@cache
def _inputs() -> list[tuple[str, Subject, dict[str, HardwareManifest]]]:
    """Every example manifest (examples/manifests/ and each concern's examples/) with the
    pools it names, and again with waivers of the rules it fires at the example time (one
    lapsing before it, one after)."""
    found: list[tuple[str, Manifest, dict[str, HardwareManifest]]] = []
    files = sorted(EXAMPLES.glob("*.yaml"))
    shared: dict[str, HardwareManifest] = {}
    for path in files:
        (manifest,) = decode_manifests(path.read_bytes(), fmt="yaml")
        if isinstance(manifest, HardwareManifest):
            shared[manifest.metadata.name] = manifest
        found.append((path.name, manifest, shared))
    for example in examples():
        pools = {pool.metadata.name: pool for pool in example.pools}
        found.append((example.name, example.manifest, pools))
    evaluator = _evaluator()
    subjects = []
    for name, manifest, pools in found:
        subjects.append((name, Subject(manifest), pools))
        at = datetime(2026, 11, 30, tzinfo=UTC)
        fired = evaluator.evaluate(Subject(manifest), evaluated_at=at, hardware=pools.get)
        waivers = [
            {"id": f"w-{n}", "rule": rule, "expires_at": format_time(at + timedelta(days=days))}
            for n, rule in enumerate(sorted(fired.decision.rules("deny")))
            for days in (-30, 60)
        ]
        if waivers:
            subjects.append((f"{name} with waivers", Subject(manifest, waivers=waivers), pools))
    return subjects


@cache
def _evaluator() -> Evaluator:
    bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
    document = {**default_matrix(bundle).document, "effective_from": "2026-01-01T00:00:00Z"}
    return Evaluator(EmbeddedEngine(bundle), LoadedMatrix.from_document(document))


def _comparable(decision: Decision) -> Any:
    """The decision less what is the evaluation's own, and less the messages of stale
    evidence (they name its age and the time on purpose)."""
    violations = [
        {**msgspec.to_builtins(v), "message": ""} if v.rule == "evidence.stale" else v
        for v in decision.violations
    ]
    return msgspec.to_builtins(
        [
            decision.verdict,
            violations,
            decision.claims,
            decision.checklist,
            decision.recommendations,
        ]
    )


@pytest.mark.parametrize("index", range(len(_inputs())), ids=[name for name, *_ in _inputs()])
def test_decisions_change_only_at_the_known_thresholds(index: int) -> None:
    name, subject, pools = _inputs()[index]
    evaluator = _evaluator()
    max_age = evaluator.matrix.document["evidence_max_age_days"]
    known = thresholds(to_builtins(subject.manifest), subject.waivers, max_age)
    flips = [threshold.flips_at for threshold in known]
    near = [flip + step for flip in flips for step in (-_MICROSECOND, timedelta(0), _MICROSECOND)]
    times = sorted({*_WIDE, *_NEAR_EXAMPLES, *near})
    previous: tuple[datetime, int, Any] | None = None
    for at in times:
        at_ns = (at - datetime(1970, 1, 1, tzinfo=UTC)) // _MICROSECOND * 1000
        passed = sum(at_ns >= threshold.flips_at_ns for threshold in known)
        decision = evaluator.evaluate(subject, evaluated_at=at, hardware=pools.get).decision
        seen = (at, passed, _comparable(decision))
        if previous is not None and previous[1] == passed:
            assert seen[2] == previous[2], (
                f"{name}: the decision changed between {previous[0]} and {at} with no known "
                "threshold in between: the policies compare a time policy.time_thresholds "
                "does not know"
            )
        previous = seen
