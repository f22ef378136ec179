"""Building the engines and evaluators the integration tests run against."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import HardwareManifest, decode_manifest
from supportgate.manifests.decision import Decision
from supportgate.matrix import load_matrix_file, prepare
from supportgate.policy import EmbeddedEngine, PolicyBundle, PolicyEngine
from supportgate.policy.engine import LoadedMatrix
from supportgate.policy.opa import OpaEngine

from .examples import expected
from .opa import expected_revision, shared_credentials

EXAMPLE_TIME = expected().evaluated_at  # the time examples/expected.yaml is written for


def example_pools(directory: Path) -> dict[str, HardwareManifest]:
    """The example HardwareManifests by name: the pools the example deployments reference."""
    pools = {}
    for path in sorted(directory.glob("hw-*.yaml")):
        manifest = decode_manifest(path.read_bytes(), fmt="yaml")
        assert isinstance(manifest, HardwareManifest)
        pools[manifest.metadata.name] = manifest
    return pools


def default_matrix(bundle: PolicyBundle) -> LoadedMatrix:
    return prepare(load_matrix_file(bundle.default_matrix_path))


def make_engine(kind: str, bundle: PolicyBundle, opa_url: str | None) -> PolicyEngine:
    if kind == "opa":
        assert opa_url is not None
        return opa_engine(opa_url, bundle)
    return EmbeddedEngine(bundle)


def opa_engine(opa_url: str, bundle: PolicyBundle, *, timeout_s: float = 5.0) -> OpaEngine:
    """The engine a service on the tests' OPA credentials (tests/opa.py) builds."""
    return OpaEngine(
        opa_url,
        bundle,
        bundle_revision=expected_revision(bundle),
        token=shared_credentials().api_token,
        timeout_s=timeout_s,
    )


def make_evaluator(engine: PolicyEngine, bundle: PolicyBundle) -> Evaluator:
    return Evaluator(engine, default_matrix(bundle))


class Engines:
    """Both engines on one bundle, with the example pools and the default matrix (the
    `engines` fixture of tests/conftest.py)."""

    def __init__(self, bundle: PolicyBundle, opa_url: str, pools: dict[str, HardwareManifest]):
        self.embedded = EmbeddedEngine(bundle)
        self.opa = opa_engine(opa_url, bundle)
        self.pools = pools
        self.default = default_matrix(bundle)

    def inputs(self, matrix: LoadedMatrix, subjects: list[Subject], at: Any) -> list[Any]:
        evaluator = Evaluator(self.embedded, matrix)
        return [
            evaluator.policy_input(s, evaluated_at=at, hardware=self.pools.get) for s in subjects
        ]

    def decide(self, spec: dict[str, Any], at: datetime) -> Decision:
        """The decision on a deployment with `spec` under the default matrix, after checking
        that both engines answer alike."""
        document = {
            "kind": "DeploymentManifest",
            "apiVersion": "supportgate/v1",
            "metadata": {"name": "dep-a"},
            "spec": spec,
        }
        subject = Subject(decode_manifest(msgspec.json.encode(document), fmt="json"))
        [policy_input] = self.inputs(self.default, [subject], at)
        assert self.embedded.evaluate(self.default, policy_input) == self.opa.evaluate(
            self.default, policy_input
        )
        evaluator = Evaluator(self.embedded, self.default)
        return evaluator.evaluate(subject, evaluated_at=at, hardware=self.pools.get).decision
