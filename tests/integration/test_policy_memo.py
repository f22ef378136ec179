"""Decisions kept and reused while the evaluation time is on the same sides of the input's
time thresholds (supportgate.policy.time_thresholds): never past a flip."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import HardwareManifest, decode_manifest
from supportgate.manifests.decision import PolicyResult
from supportgate.policy import EmbeddedEngine, MemoizedEngine, PolicyBundle
from supportgate.policy.engine import LoadedMatrix
from supportgate.policy.inputs import PolicyInput, build_input, canonical_digest, format_time

from .. import strategies
from ..clock import FakeClock
from ..engines import EXAMPLE_TIME, default_matrix
from ..examples import EXAMPLES


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


def _pools(examples_dir: Path) -> dict[str, HardwareManifest]:
    """The example HardwareManifests, by name (the pools the deployments' refs name)."""
    found = (_manifest(examples_dir, path.name) for path in sorted(examples_dir.glob("hw-*.yaml")))
    return {pool.metadata.name: pool for pool in found if isinstance(pool, HardwareManifest)}


@cache
def _pool_lookup() -> dict[str, HardwareManifest]:
    return _pools(EXAMPLES)


def _with_evidence_times(examples_dir: Path) -> list[Path]:
    return [p for p in sorted(examples_dir.glob("dep-*.yaml")) if " at: " in p.read_text()]


def _evaluator(engine: Any, bundle: PolicyBundle) -> Evaluator:
    return Evaluator(engine, default_matrix(bundle))


def test_a_pool_is_evaluated_once_and_answered_the_same_later(
    counting: CountingEngine, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    memo = MemoizedEngine(counting, policy_bundle)
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


def test_repeated_posts_with_fresh_evidence_or_a_waiver_reuse_the_decision(
    counting: CountingEngine, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    memo = MemoizedEngine(counting, policy_bundle)
    evaluator = _evaluator(memo, policy_bundle)
    pools = _pools(examples_dir)
    timed = [_manifest(examples_dir, path.name) for path in _with_evidence_times(examples_dir)]
    stale = [m for m in timed if m.metadata.name == "v41-pro-b200-trial"]  # evidence.stale
    assert len(timed) > len(stale) == 1, "the examples have fresh and stale evidence times"
    pool = _manifest(examples_dir, "hw-h100-pool-a.yaml")
    waiver = {"id": "w-1", "rule": "support.toolkit", "expires_at": "2027-01-01T00:00:00Z"}
    subjects = [Subject(m) for m in timed] + [Subject(pool, waivers=[waiver])]

    for minutes in range(3):  # CI posting the same manifests a minute apart
        for subject in subjects:
            evaluator.evaluate(
                subject, evaluated_at=EXAMPLE_TIME + timedelta(minutes=minutes), hardware=pools.get
            )

    # each once, but the stale deployment every time: its message names the evaluation time
    assert counting.asked == len(subjects) + 2 * len(stale)
    assert memo.hits == 2 * (len(subjects) - len(stale))


def test_a_kept_answer_is_not_given_once_evidence_turns_stale_or_a_waiver_lapses(
    counting: CountingEngine, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    evaluator = _evaluator(MemoizedEngine(counting, policy_bundle), policy_bundle)
    pools = _pools(examples_dir)
    deployment = _manifest(examples_dir, "dep-b200-offline.yaml")  # build evidence at 11-20 10:00
    built = datetime(2026, 11, 20, 10, tzinfo=UTC)
    last_fresh = built + timedelta(days=90)  # evidence_max_age_days: stale once older than 90
    pool = _manifest(examples_dir, "hw-h100-declared-sm100.yaml")  # rejected: a wrong arch
    lapses = EXAMPLE_TIME + timedelta(days=3)
    waiver = {"id": "w-1", "rule": "hardware.accelerator-arch", "expires_at": format_time(lapses)}

    def rules(subject: Subject, at: datetime) -> set[str]:
        return evaluator.evaluate(subject, evaluated_at=at, hardware=pools.get).decision.rules()

    assert "evidence.stale" not in rules(Subject(deployment), last_fresh - timedelta(days=1))
    assert "evidence.stale" not in rules(Subject(deployment), last_fresh)
    assert "evidence.stale" in rules(Subject(deployment), last_fresh + timedelta(microseconds=1))
    waived = Subject(pool, waivers=[waiver])
    assert "hardware.accelerator-arch" in rules(waived, EXAMPLE_TIME)
    severities = {
        at: evaluator.evaluate(waived, evaluated_at=at).decision.violations
        for at in (lapses - timedelta(microseconds=1), lapses)
    }
    assert [v.severity for v in severities[lapses - timedelta(microseconds=1)]] == ["waived"]
    assert [v.severity for v in severities[lapses]] == ["deny"]
    # kept: the fresh evidence a day later, the waiver until its last microsecond; evaluated:
    # the first post on each side of each threshold (stale evidence every time)
    assert counting.asked == 4


def test_a_stale_answer_is_never_given_for_evidence_that_ages(
    policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    """The same manifest later turns stale: the memo gives the fresh answer only before."""
    evaluator = _evaluator(
        MemoizedEngine(EmbeddedEngine(policy_bundle), policy_bundle), policy_bundle
    )
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
    memo = MemoizedEngine(counting, policy_bundle, capacity=2)
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


_DENY_RULES = (
    "hardware.accelerator-arch",
    "port.production",
    "topology.capacity",
    "manifest.hardware-ref",
)
_MICROSECOND = timedelta(microseconds=1)


@st.composite
def _waivers(draw: st.DrawFn) -> list[dict[str, str]]:
    """Up to two waivers of deny rules, expiring within 200 days either side of EXAMPLE_TIME."""
    expiries = st.integers(-200 * 86400, 200 * 86400).map(
        lambda seconds: format_time(EXAMPLE_TIME + timedelta(seconds=seconds))
    )
    waiver = st.fixed_dictionaries({"rule": st.sampled_from(_DENY_RULES), "expires_at": expiries})
    found = draw(st.lists(waiver, max_size=2))
    return [{"id": f"w-{n}", **item} for n, item in enumerate(found)]


@st.composite
def _times(draw: st.DrawFn, flips: list[datetime]) -> list[datetime]:
    """Evaluation times, ascending: anywhere within 400 days of EXAMPLE_TIME, and exactly on
    and either side of the input's thresholds (the last moment before each flip, and after)."""
    near = [flip + step for flip in flips for step in (-_MICROSECOND, timedelta(0), _MICROSECOND)]
    anywhere = st.integers(-400 * 86400, 400 * 86400).map(
        lambda seconds: EXAMPLE_TIME + timedelta(seconds=seconds)
    )
    picked = draw(
        st.lists(st.sampled_from(near) | anywhere if near else anywhere, min_size=1, max_size=8)
    )
    return sorted(picked)


def _edges(
    manifest: dict[str, Any], waivers: list[dict[str, str]], max_age_days: int
) -> list[datetime]:
    """Read here from the input, apart from the code under test: the last fresh moment of
    each evidence time (its `at` plus the maximum age) and each waiver's expiry."""
    evidence = manifest.get("spec", {}).get("evidence", {}).values()
    ages = [
        datetime.fromisoformat(item["at"]) + timedelta(days=max_age_days)
        for item in evidence
        if "at" in item
    ]
    return ages + [datetime.fromisoformat(waiver["expires_at"]) for waiver in waivers]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    manifest=strategies.manifests(),
    waivers=_waivers(),
    max_age_days=st.sampled_from((0, 1, 90, 365)),
    data=st.data(),
)
def test_the_memo_answers_as_a_fresh_evaluation_at_every_time(
    policy_bundle: PolicyBundle,
    manifest: dict[str, Any],
    waivers: list[dict[str, str]],
    max_age_days: int,
    data: st.DataObject,
) -> None:
    """What makes reuse sound: posting the same input as a FakeClock moves (each time twice,
    as CI re-posts), the memoized engine answers exactly what a fresh evaluation does."""
    matrix = LoadedMatrix.from_document(
        {**default_matrix(policy_bundle).document, "evidence_max_age_days": max_age_days}
    )
    memoized = Evaluator(MemoizedEngine(EmbeddedEngine(policy_bundle), policy_bundle), matrix)
    fresh = Evaluator(EmbeddedEngine(policy_bundle), matrix)
    subject = Subject(decode_manifest(msgspec.json.encode(manifest), fmt="json"), waivers=waivers)
    pools = _pool_lookup()
    times = data.draw(_times(_edges(manifest, waivers, max_age_days)))
    clock = FakeClock(times[0])
    for at in times:
        clock.advance(at - clock.now())
        for _ in range(2):
            kept = memoized.evaluate(subject, evaluated_at=clock.now(), hardware=pools.get)
            new = fresh.evaluate(subject, evaluated_at=clock.now(), hardware=pools.get)
            assert msgspec.to_builtins(kept.decision.violations) == msgspec.to_builtins(
                new.decision.violations
            ), clock.now()
            assert (kept.decision.verdict, kept.decision.claims) == (
                new.decision.verdict,
                new.decision.claims,
            )


def test_the_timeless_key_is_the_input_without_its_time_and_the_manifest_encoded_once(
    examples_dir: Path,
) -> None:
    manifest = msgspec.to_builtins(_manifest(examples_dir, "hw-h100-pool-a.yaml"))
    now = build_input(manifest, evaluated_at=EXAMPLE_TIME)
    later = build_input(manifest, evaluated_at=EXAMPLE_TIME + timedelta(seconds=1))
    without_time = {k: v for k, v in now.document.items() if k != "evaluated_at"}

    assert now.timeless_key == later.timeless_key
    assert now.digest != later.digest
    assert now.timeless_key == canonical_digest(msgspec.json.encode(without_time, order="sorted"))
    # the manifest is encoded once and embedded: the same bytes as encoding it all again
    assert now.canonical == msgspec.json.encode(now.document, order="sorted")
    assert now.manifest_digest == canonical_digest(msgspec.json.encode(manifest, order="sorted"))


_ORG_TIME_RULE = """package supportgate.org.freeze

# METADATA
# title: Change freeze
# description: No deployment is accepted during the year-end change freeze.
# custom:
#   id: org.freeze.year-end
#   severity: deny
deny contains {"rule": "org.freeze.year-end", "path": "spec", "message": "change freeze"} if {
	input.evaluated_at >= "2026-12-20T00:00:00Z"
}
"""


def test_an_organisation_rule_that_reads_the_time_turns_the_memo_off(
    tmp_path: Path, examples_dir: Path
) -> None:
    """Its comparison is no threshold time_thresholds knows: nothing is kept under it."""
    (tmp_path / "freeze").mkdir()
    (tmp_path / "freeze" / "freeze.rego").write_text(_ORG_TIME_RULE, encoding="utf-8")
    bundle = PolicyBundle.load(DEFAULT_POLICY_DIR, [tmp_path / "freeze"])
    counting = CountingEngine(bundle)
    evaluator = _evaluator(MemoizedEngine(counting, bundle), bundle)
    subject = Subject(_manifest(examples_dir, "hw-b200-pool.yaml"))

    before = evaluator.evaluate(subject, evaluated_at=EXAMPLE_TIME).decision
    during = evaluator.evaluate(subject, evaluated_at=EXAMPLE_TIME + timedelta(days=20)).decision

    assert "org.freeze.year-end" not in before.rules()
    assert "org.freeze.year-end" in during.rules()
    assert counting.asked == 2
