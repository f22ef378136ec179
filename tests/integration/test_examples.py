"""The shared examples give exactly the decisions in expected.yaml, on both engines."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from supportgate.evaluations.evaluator import Subject
from supportgate.manifests import HardwareManifest, Manifest, decode_manifest
from supportgate.policy import PolicyBundle

from ..engines import EXAMPLE_TIME, make_engine, make_evaluator


def _load(examples: Path, name: str) -> Manifest:
    return decode_manifest((examples / name).read_bytes(), fmt="yaml", source=name)


def test_every_example_matches_expected(
    engine_kind: str,
    policy_bundle: PolicyBundle,
    shared_examples: Path,
    request: pytest.FixtureRequest,
) -> None:
    opa_url = request.getfixturevalue("opa_url") if engine_kind == "opa" else None
    evaluator = make_evaluator(make_engine(engine_kind, policy_bundle, opa_url), policy_bundle)
    expected = yaml.safe_load((shared_examples / "expected.yaml").read_text())
    manifests = {name: _load(shared_examples, name) for name in expected}
    pools = {m.metadata.name: m for m in manifests.values() if isinstance(m, HardwareManifest)}
    assert len(expected) == 8
    for name, want in expected.items():
        decision = evaluator.evaluate(
            Subject(manifests[name]), evaluated_at=EXAMPLE_TIME, hardware=pools.get
        ).decision
        rules = decision.rules()
        assert decision.verdict == want["verdict"], (name, decision.violations)
        assert decision.allowed == (want["verdict"] != "rejected"), name
        assert set(want["rules"]) <= rules, (name, rules)
        assert not set(want.get("absent", [])) & rules, (name, rules)


def test_unresolved_hardware_ref_is_rejected(
    policy_bundle: PolicyBundle, shared_examples: Path
) -> None:
    evaluator = make_evaluator(make_engine("embedded", policy_bundle, None), policy_bundle)
    deployment = _load(shared_examples, "dep-b200-offline.yaml")
    decision = evaluator.evaluate(Subject(deployment), evaluated_at=EXAMPLE_TIME).decision
    assert decision.verdict == "rejected"
    assert "manifest.hardware-ref" in decision.rules("deny")
