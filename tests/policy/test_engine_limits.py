"""The largest numbers and the earliest and latest times the decoder accepts are judged by
both policy engines, alike: a decision, never "the engine cannot answer", and evidence from
the first accepted day is stale."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import HardwareManifest, decode_manifest, decode_matrix
from supportgate.manifests.common import MAX_SAFE_INTEGER
from supportgate.manifests.decision import Decision
from supportgate.matrix import prepare
from supportgate.policy import PolicyBundle

from ..engines import make_engine
from ..examples import EXAMPLES

NOW = datetime(2026, 11, 30, tzinfo=UTC)
LARGEST_DOUBLE = 1.7976931348623157e308


def _yaml(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((EXAMPLES / name).read_text())
    return loaded


def _pool() -> HardwareManifest:
    doc = _yaml("hw-h100-pool-a.yaml")
    doc["spec"]["nodes"] = MAX_SAFE_INTEGER
    doc["spec"]["accelerator"].update(per_node=MAX_SAFE_INTEGER, memory_gib=LARGEST_DOUBLE)
    doc["spec"]["interconnect"]["scale_up_domain"] = MAX_SAFE_INTEGER
    pool = decode_manifest(json.dumps(doc).encode(), fmt="json")
    assert isinstance(pool, HardwareManifest)
    return pool


def _trial(first: str, last: str) -> bytes:
    doc = _yaml("dep-h100-port-trial.yaml")
    doc["spec"]["topology"] = {"prefill_gpus": MAX_SAFE_INTEGER, "decode_gpus": MAX_SAFE_INTEGER}
    doc["spec"]["evidence"] = {
        "build": {"status": "passed", "at": first},
        "performance": {
            "status": "passed",
            "at": last,
            "prefill_latency_ms": LARGEST_DOUBLE,
            "concurrency": MAX_SAFE_INTEGER,
        },
    }
    return json.dumps(doc).encode()


def _decide(evaluator: Evaluator, body: bytes, pool: HardwareManifest) -> Decision:
    manifest = decode_manifest(body, fmt="json")
    lookup = {pool.metadata.name: pool}.get
    return evaluator.evaluate(Subject(manifest), evaluated_at=NOW, hardware=lookup).decision


def test_the_extremes_are_decided(
    engine_kind: str, policy_bundle: PolicyBundle, request: pytest.FixtureRequest
) -> None:
    opa_url = request.getfixturevalue("opa_url") if engine_kind == "opa" else None
    engine = make_engine(engine_kind, policy_bundle, opa_url)
    request.addfinalizer(engine.close)  # OPA's connection pool
    matrix_doc = yaml.safe_load(policy_bundle.default_matrix_path.read_text())
    pool = _pool()
    trial = _trial("1678-01-01T00:00:00Z", "2261-12-31T23:59:59.999999Z")
    default = Evaluator(engine, prepare(decode_matrix(json.dumps(matrix_doc).encode(), fmt="json")))
    decision = _decide(default, trial, pool)
    stale = {v.path for v in decision.violations if v.rule == "evidence.stale"}
    assert stale == {"spec.evidence.build"}, decision

    matrix_doc["evidence_max_age_days"] = MAX_SAFE_INTEGER  # nothing is ever stale
    lenient = Evaluator(engine, prepare(decode_matrix(json.dumps(matrix_doc).encode(), fmt="json")))
    decision = _decide(lenient, trial, pool)
    assert "evidence.stale" not in {v.rule for v in decision.violations}, decision
