"""Invariants of evidence that proves something (CONTRACT 10.1), on both engines.

- An evidence item dated more than 5 minutes after the evaluation time never counts as proof:
  its claim stays unproven and evidence.future names it, however complete it is otherwise.
- port.production never lets an unlisted production deployment through on anything but
  proof: a production deployment of the matrix's engine that is not officially supported
  and not rejected has every evidence item proof, as this file's own reading of 10.1 has it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .. import strategies
from ..engines import EXAMPLE_TIME, Engines
from ..policy.test_parity import moments

pytestmark = pytest.mark.opa

CLAIM_OF = {
    "build": "builds",
    "numerical_parity": "correct",
    "structured_output": "correct",
    "long_context": "correct",
    "distributed_stability": "correct",
    "performance": "performant",
}
FIGURES = {
    "prefill_latency_ms": 180,
    "decode_latency_ms": 28,
    "concurrency": 256,
    "memory_gib": 72.5,
    "recovery_s": 0,
}
FULL_PORT = {  # the port record of h100-pool-a's trial: the port rules are quiet on it
    "production_stack_unchanged": True,
    "isolated_branch": True,
    "pinned": {
        "engine": "1.0.0",
        "toolkit": "12.8",
        "driver": "570.86.15",
        "compiler": "gcc-13.2.0",
        "model": "sha256:5be1c0",
    },
    "arch_dependencies": dict.fromkeys(strategies.ARCH_DEPENDENCIES, "ported"),
}


def _time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def proof_item(name: str, at: datetime) -> dict[str, Any]:
    """An item that is proof when evaluated from `at` on (for the matrix's maximum age)."""
    item: dict[str, Any] = {"status": "passed", "at": _time(at), "ref": "ci://runs/1"}
    if name == "numerical_parity":
        item["reference_runtime"] = "vllm"
    if name == "performance":
        item |= FIGURES
    return item


def is_proof(name: str, item: dict[str, Any], now: datetime, max_age_days: int) -> bool:
    """CONTRACT 10.1, read independently of the policies."""
    if item.get("status") != "passed" or not item.get("ref") or "at" not in item:
        return False
    at = datetime.fromisoformat(item["at"])
    if at > now + timedelta(minutes=5) or now - at > timedelta(days=max_age_days):
        return False
    if name == "numerical_parity" and not item.get("reference_runtime"):
        return False
    if name == "performance":
        figures = ("prefill_latency_ms", "decode_latency_ms", "concurrency", "memory_gib")
        if not all(item.get(figure, 0) > 0 for figure in figures):
            return False
        return bool(item.get("recovery_s", -1) >= 0)
    return True


@settings(settings.get_profile("parity"), max_examples=150)
@given(
    spec=strategies.deployment_specs(),
    item=st.sampled_from(strategies.EVIDENCE),
    ahead=st.integers(5 * 60 + 1, 400 * 24 * 3600),
    at=moments,
)
def test_evidence_dated_after_the_evaluation_is_never_proof(
    engines: Engines, spec: dict[str, Any], item: str, ahead: int, at: datetime
) -> None:
    dated = proof_item(item, at + timedelta(seconds=ahead))
    spec = {**spec, "evidence": {**spec.get("evidence", {}), item: dated}}
    decision = engines.decide(spec, at)
    if item in CLAIM_OF:
        assert getattr(decision.claims, CLAIM_OF[item]) == "unproven"
    future = {v.path for v in decision.violations if v.rule == "evidence.future"}
    assert f"spec.evidence.{item}" in future
    # the moment it lies no more than 5 minutes ahead, it is proof again
    now_due = at + timedelta(seconds=ahead) - timedelta(minutes=5)
    due = engines.decide(spec, now_due)
    assert f"spec.evidence.{item}" not in {v.path for v in due.violations}


def _production_specs() -> st.SearchStrategy[dict[str, Any]]:
    """Production deployments of deepinfer with a full port record and a small topology, so
    that proof decides; the evidence is all proof, all proof but one generated or missing
    item, or generated."""
    recent = EXAMPLE_TIME - timedelta(days=20)
    proof = {name: proof_item(name, recent) for name in strategies.EVIDENCE}
    one_off = st.sampled_from(strategies.EVIDENCE).flatmap(
        lambda name: strategies.evidence_items(name).map(lambda item: {**proof, name: item})
    )
    missing = st.sampled_from(strategies.EVIDENCE).map(
        lambda name: {other: item for other, item in proof.items() if other != name}
    )
    generated = st.fixed_dictionaries(
        {},
        optional={name: strategies.evidence_items(name) for name in strategies.EVIDENCE},
    )
    evidence = st.just(proof) | one_off | missing | generated
    return st.fixed_dictionaries(
        {
            "hardware": st.fixed_dictionaries({"ref": st.sampled_from(strategies.POOL_NAMES)}),
            "engine": st.just({"name": "deepinfer", "version": "1.0.0"}),
            "model": st.fixed_dictionaries({"name": st.sampled_from(strategies.MODELS)}),
            "stage": st.just("production"),
            "mode": st.just("offline"),
            "topology": st.just({"prefill_gpus": 1, "decode_gpus": 1}),
            "port": st.just(FULL_PORT),
            "evidence": evidence,
        }
    )


def test_port_production_lets_unlisted_production_through_only_on_proof(
    engines: Engines,
) -> None:
    max_age = engines.default.document["evidence_max_age_days"]
    seen: set[str] = set()

    @settings(settings.get_profile("parity"), max_examples=300)
    @given(spec=_production_specs(), at=moments)
    def only_on_proof(spec: dict[str, Any], at: datetime) -> None:
        decision = engines.decide(spec, at)
        if decision.checklist.official_support:
            return
        evidence = spec["evidence"]
        proven = all(
            is_proof(name, evidence.get(name, {}), at, max_age) for name in strategies.EVIDENCE
        )
        if decision.verdict != "rejected":
            assert proven, "an unlisted production deployment passed without proof"
            seen.add("through on proof")
        if "port.production" in decision.rules("deny"):
            assert not proven
            seen.add("stopped by port.production")

    only_on_proof()
    assert seen == {"through on proof", "stopped by port.production"}
