"""Decisions kept for time-independent inputs: reused only where the time cannot matter."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import decode_manifest
from supportgate.manifests.decision import PolicyResult
from supportgate.policy import EmbeddedEngine, MemoizedEngine, PolicyBundle
from supportgate.policy.engine import LoadedMatrix
from supportgate.policy.inputs import PolicyInput, build_input, canonical_digest

from .. import strategies
from ..engines import EXAMPLE_TIME, default_matrix


class CountingEngine(EmbeddedEngine):
    """The real in-process engine, counting the inputs it is asked about."""

    def __init__(self, bundle: PolicyBundle) -> None:
        super().__init__(bundle)
        self.asked = 0

    def evaluate(self, matrix: LoadedMatrix, policy_input: PolicyInput) -> PolicyResult:
        self.asked += 1
        return super().evaluate(matrix, policy_input)

    def evaluate_batch(
        self, matrix: LoadedMatrix, inputs: Sequence[PolicyInput]
    ) -> list[PolicyResult]:
        self.asked += len(inputs)
        return super().evaluate_batch(matrix, inputs)


@pytest.fixture
def counting(policy_bundle: PolicyBundle) -> CountingEngine:
    return CountingEngine(policy_bundle)


def _manifest(examples_dir: Path, name: str) -> Any:
    return decode_manifest((examples_dir / name).read_bytes(), fmt="yaml")


def _with_evidence_times(examples_dir: Path) -> list[Path]:
    return [p for p in sorted(examples_dir.glob("dep-*.yaml")) if " at: " in p.read_text()]


def _evaluator(engine: Any, bundle: PolicyBundle) -> Evaluator:
    return Evaluator(engine, default_matrix(bundle))


def test_a_pool_is_evaluated_once_and_answered_the_same_later(
    counting: CountingEngine, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    memo = MemoizedEngine(counting)
    evaluator = _evaluator(memo, policy_bundle)
    subject = Subject(_manifest(examples_dir, "hw-h100-pool-a.yaml"))

    first = evaluator.evaluate(subject, evaluated_at=EXAMPLE_TIME)
    later = evaluator.evaluate(subject, evaluated_at=EXAMPLE_TIME + timedelta(days=400))

    assert counting.asked == 1
    assert (memo.hits, memo.misses) == (1, 1)
    assert later.decision.verdict == first.decision.verdict
    assert later.decision.violations == first.decision.violations
    # what is recorded still belongs to each evaluation
    assert later.decision.id != first.decision.id
    assert later.policy_input.digest != first.policy_input.digest
    assert later.decision.evaluated_at > first.decision.evaluated_at


def test_evidence_times_and_waivers_are_always_evaluated(
    counting: CountingEngine, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    evaluator = _evaluator(MemoizedEngine(counting), policy_bundle)
    timed = [_manifest(examples_dir, path.name) for path in _with_evidence_times(examples_dir)]
    assert timed, "the examples have deployments with evidence times"
    pool = _manifest(examples_dir, "hw-h100-pool-a.yaml")
    waiver = {"id": "w-1", "rule": "support.toolkit", "expires_at": "2027-01-01T00:00:00Z"}
    subjects = [Subject(m) for m in timed] + [Subject(pool, waivers=[waiver])]

    for _ in range(2):
        for subject in subjects:
            evaluator.evaluate(subject, evaluated_at=EXAMPLE_TIME)

    assert counting.asked == 2 * len(subjects)


def test_a_stale_answer_is_never_given_for_evidence_that_ages(
    policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    """The reason evidence times are excluded: the same manifest later turns stale."""
    evaluator = _evaluator(MemoizedEngine(EmbeddedEngine(policy_bundle)), policy_bundle)
    manifest = _manifest(examples_dir, _with_evidence_times(examples_dir)[0].name)
    now = evaluator.evaluate(Subject(manifest), evaluated_at=EXAMPLE_TIME)
    later = evaluator.evaluate(Subject(manifest), evaluated_at=EXAMPLE_TIME + timedelta(days=900))

    def stale(evaluation: Any) -> bool:
        return any(v.rule == "evidence.stale" for v in evaluation.decision.violations)

    assert not stale(now)
    assert stale(later)


def test_matrices_and_batches_keep_answers_apart_and_in_order(
    counting: CountingEngine, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    memo = MemoizedEngine(counting, capacity=2)
    matrix = default_matrix(policy_bundle)
    other_document = {**matrix.document, "version": "other"}
    other = LoadedMatrix.from_document(other_document)
    pools = [_manifest(examples_dir, p.name) for p in sorted(examples_dir.glob("hw-*"))]
    assert len(pools) >= 3
    subjects = [Subject(p) for p in pools]

    first = Evaluator(memo, matrix).evaluate_batch(subjects, evaluated_at=EXAMPLE_TIME)
    again = Evaluator(memo, matrix).evaluate_batch(subjects[-2:], evaluated_at=EXAMPLE_TIME)
    under_other = Evaluator(memo, other).evaluate(subjects[-1], evaluated_at=EXAMPLE_TIME)

    assert counting.asked == len(subjects) + 1  # the last two were kept; another matrix is not
    assert [a.decision.violations for a in again] == [f.decision.violations for f in first[-2:]]
    assert under_other.decision.matrix_version == "other"
    assert memo.hits == 2
    # capacity 2: the first pool's answer was dropped, so it is asked again
    Evaluator(memo, matrix).evaluate(subjects[0], evaluated_at=EXAMPLE_TIME)
    assert counting.asked == len(subjects) + 2


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifest=strategies.manifests(), days=st.integers(-3000, 3000))
def test_a_timeless_input_gets_the_same_decision_at_every_time(
    policy_bundle: PolicyBundle, manifest: dict[str, Any], days: int
) -> None:
    """What makes reuse sound: when timeless_key is set, the time changes nothing."""
    evaluator = _evaluator(EmbeddedEngine(policy_bundle), policy_bundle)
    subject = Subject(decode_manifest(msgspec.json.encode(manifest), fmt="json"))
    now = evaluator.evaluate(subject, evaluated_at=EXAMPLE_TIME)
    if now.policy_input.timeless_key is None:
        return
    then = evaluator.evaluate(subject, evaluated_at=EXAMPLE_TIME + timedelta(days=days))
    assert then.policy_input.timeless_key == now.policy_input.timeless_key
    assert msgspec.to_builtins(then.decision.violations) == msgspec.to_builtins(
        now.decision.violations
    )
    assert then.decision.verdict == now.decision.verdict


def test_the_timeless_key_is_the_input_without_its_time(examples_dir: Path) -> None:
    manifest = msgspec.to_builtins(_manifest(examples_dir, "hw-h100-pool-a.yaml"))
    now = build_input(manifest, evaluated_at=EXAMPLE_TIME)
    later = build_input(manifest, evaluated_at=EXAMPLE_TIME + timedelta(seconds=1))
    without_time = {k: v for k, v in now.document.items() if k != "evaluated_at"}

    assert now.timeless_key == later.timeless_key
    assert now.digest != later.digest
    assert now.timeless_key == canonical_digest(msgspec.json.encode(without_time, order="sorted"))
