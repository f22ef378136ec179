"""Building the engines and evaluators the integration tests run against."""

from __future__ import annotations

from pathlib import Path

from supportgate.evaluations.evaluator import Evaluator
from supportgate.manifests import HardwareManifest, decode_manifest
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
