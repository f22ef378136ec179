"""The restructured policy tree answers exactly as the previous one (issue 13).

The previous tree is kept as a fixture (tests/fixtures/policy_tree_v1, never edited): every
generated input is evaluated under it and under `policies/` by the embedded engine, and the
whole decision documents must be equal. Inputs go through the production path (decode →
Struct → policy input), under the default matrix and generated ones, with waivers, and at
evaluation times chosen on and around the thresholds the policies compare: an evidence
item's age against evidence_max_age_days, a waiver's expires_at against evaluated_at.

Drawing manifests is most of the cost, so each drawn manifest is evaluated at VARIANTS
times with different waivers (a seeded Random from hypothesis picks them), and a hypothesis
example is a batch of MANIFESTS manifests.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path
from random import Random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import HardwareManifest, decode_manifest, decode_matrix
from supportgate.matrix import prepare
from supportgate.policy import EmbeddedEngine, PolicyBundle
from supportgate.policy.engine import LoadedMatrix
from supportgate.policy.inputs import PolicyInput

from .. import strategies
from ..engines import default_matrix

ORACLE_DIR = Path(__file__).parents[1] / "fixtures" / "policy_tree_v1"
INPUTS = 10_000
MANIFESTS = 10  # drawn per example
VARIANTS = 20  # evaluation times and waivers per manifest
# Offsets from a threshold: on it, a nanosecond-ish step (the canonical form keeps
# microseconds), a second, a day either side, and far.
NEAR = (0, 1, -1, 1_000_000, -1_000_000, 86_400_000_000, -86_400_000_000, 10**13, -(10**13))

settings.register_profile(
    "oracle",
    deadline=None,
    derandomize=os.environ.get("CI") == "true",
    suppress_health_check=list(HealthCheck),
    database=None,
    phases=(Phase.explicit, Phase.generate),  # shrinking these batches takes minutes
)


class Trees:
    def __init__(self) -> None:
        self.old = EmbeddedEngine(PolicyBundle.load(ORACLE_DIR))
        self.new_bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
        self.new = EmbeddedEngine(self.new_bundle)
        self.default = default_matrix(self.new_bundle)
        self.evaluated = 0
        self.verdicts: set[str] = set()
        self.rules: set[str] = set()
        self.waived = 0

    def compare(self, matrix: LoadedMatrix, inputs: list[PolicyInput]) -> None:
        old = self.old.evaluate_batch(matrix, inputs)
        new = self.new.evaluate_batch(matrix, inputs)
        for policy_input, before, after in zip(inputs, old, new, strict=True):
            assert after == before, (policy_input.canonical.decode(), before, after)
            self.verdicts.add(after.verdict)
            self.rules.update(v.rule for v in after.violations)
            self.waived += sum(v.severity == "waived" for v in after.violations)
        self.evaluated += len(inputs)


@pytest.fixture(scope="module")
def trees() -> Trees:
    return Trees()


def _micros(moment: datetime, offset_us: int) -> datetime:
    return moment + timedelta(microseconds=offset_us)


def _evidence_times(document: dict[str, Any]) -> list[datetime]:
    evidence = document["spec"].get("evidence", {})
    return [datetime.fromisoformat(item["at"]) for item in evidence.values() if "at" in item]


def _variants(
    document: dict[str, Any], max_age_days: int, rng: Random
) -> list[tuple[datetime, list[dict[str, str]]]]:
    """VARIANTS evaluation times for one manifest (half of them, where it has evidence times,
    on or next to an evidence item's staleness threshold), each with up to three waivers
    expiring on, next to or far from that time."""
    recorded = _evidence_times(document)
    variants = []
    for _ in range(VARIANTS):
        at = strategies.NOW + timedelta(hours=rng.randint(-400, 400))
        if recorded and rng.random() < 0.5:
            threshold = rng.choice(recorded) + timedelta(days=max_age_days)
            at = _micros(threshold, rng.choice(NEAR))
        waivers = [
            {
                "id": rng.choice(("w-1", "w-2", "w-3")),
                "rule": rng.choice(strategies.WAIVED_RULES),
                "expires_at": _micros(at, rng.choice(NEAR)).isoformat().replace("+00:00", "Z"),
            }
            for _ in range(rng.randint(0, 3))
        ]
        variants.append((at, waivers))
    return variants


def _inputs(
    trees: Trees,
    matrix: LoadedMatrix,
    pools: list[dict[str, Any]],
    documents: list[dict[str, Any]],
    rng: Random,
) -> list[PolicyInput]:
    evaluator = Evaluator(trees.new, matrix)
    tracked: dict[str, HardwareManifest] = {}
    for name, doc in zip(strategies.POOL_NAMES, pools, strict=False):
        pool = decode_manifest(msgspec.json.encode(doc), fmt="json")
        assert isinstance(pool, HardwareManifest)
        tracked[name] = pool
    max_age = int(matrix.document["evidence_max_age_days"])
    inputs = []
    for document in documents:
        manifest = decode_manifest(msgspec.json.encode(document), fmt="json")
        for at, waivers in _variants(document, max_age, rng):
            subject = Subject(manifest, waivers=waivers)
            inputs.append(evaluator.policy_input(subject, evaluated_at=at, hardware=tracked.get))
    return inputs


# Tracked pools for the refs: a HardwareManifest for some of the pool names.
pools = st.lists(strategies.hardware_manifests(), max_size=len(strategies.POOL_NAMES))
documents = st.lists(strategies.manifests(), min_size=MANIFESTS, max_size=MANIFESTS)


def test_decisions_are_unchanged(trees: Trees) -> None:
    """INPUTS inputs, half under the default matrix, half under generated ones (a matrix per
    example); together they must reach every verdict and the time-dependent rules."""

    @settings(settings.get_profile("oracle"), max_examples=INPUTS // (MANIFESTS * VARIANTS))
    @given(data=st.data(), generated=st.booleans(), rng=st.randoms(use_true_random=False))
    def same(data: st.DataObject, generated: bool, rng: Random) -> None:
        matrix = trees.default
        if generated:
            drawn = data.draw(strategies.matrices())
            matrix = prepare(decode_matrix(msgspec.json.encode(drawn), fmt="json"))
        inputs = _inputs(trees, matrix, data.draw(pools), data.draw(documents), rng)
        trees.compare(matrix, inputs)

    same()
    assert trees.evaluated >= INPUTS
    assert trees.verdicts == {"supported", "experimental", "rejected"}
    assert {"evidence.stale", "service.kv_cache", "port.production"} <= trees.rules
    assert trees.waived
