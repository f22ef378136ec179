"""The engines' contract beyond parity: caching, concurrency, revisions, and failures that
must become engine errors, never verdicts."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from supportgate.errors import PolicyEngineUnavailable, UsageError
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import Manifest, decode_manifest
from supportgate.policy import EmbeddedEngine, PolicyBundle
from supportgate.policy.inputs import PolicyInput
from supportgate.policy.opa import OpaEngine

from ..engines import EXAMPLE_TIME, default_matrix
from ..services import free_port


def _example(examples: Path, name: str) -> Manifest:
    return decode_manifest((examples / name).read_bytes(), fmt="yaml")


def _input(bundle: PolicyBundle, manifest: Manifest) -> PolicyInput:
    evaluator = Evaluator(EmbeddedEngine(bundle), default_matrix(bundle))
    return evaluator.policy_input(
        Subject(manifest), evaluated_at=EXAMPLE_TIME, hardware=lambda _: None
    )


def test_policy_revision_changes_with_any_policy_edit(
    policy_bundle: PolicyBundle, tmp_path: Path
) -> None:
    copy = tmp_path / "policies"
    shutil.copytree(policy_bundle.directory, copy)
    assert PolicyBundle.load(copy).revision == policy_bundle.revision
    host = copy / "supportgate" / "host" / "host.rego"
    host.write_text(host.read_text() + "\n# a comment is an edit too\n")
    assert PolicyBundle.load(copy).revision != policy_bundle.revision


def test_input_digest_is_canonical(policy_bundle: PolicyBundle, examples_dir: Path) -> None:
    manifest = _example(examples_dir, "hw-h100-pool-a.yaml")
    first, second = _input(policy_bundle, manifest), _input(policy_bundle, manifest)
    assert first.digest == second.digest
    assert first.digest.startswith("sha256:")
    assert len(first.digest) == len("sha256:") + 64
    # sorted keys, no insignificant whitespace: the same document always hashes the same
    assert first.canonical.startswith(b'{"evaluated_at":"2026-11-30T00:00:00Z","manifest":{')


def test_embedded_engine_is_safe_under_concurrent_use(
    policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    engine = EmbeddedEngine(policy_bundle)
    matrix = default_matrix(policy_bundle)
    inputs = [
        _input(policy_bundle, _example(examples_dir, name))
        for name in ("hw-h100-pool-a.yaml", "hw-rtx4090-workstation.yaml", "hw-b200-pool.yaml")
    ]
    expected = [engine.evaluate(matrix, item) for item in inputs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda i: engine.evaluate(matrix, inputs[i % 3]), range(600)))
    assert got == [expected[i % 3] for i in range(600)]


def test_embedded_engine_refuses_broken_policies(
    tmp_path: Path, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    copy = tmp_path / "policies"
    shutil.copytree(policy_bundle.directory, copy)
    (copy / "supportgate" / "host" / "host.rego").write_text(
        "package supportgate.host\n\ndeny contains x if {\n"
    )
    broken = PolicyBundle.load(copy)
    with pytest.raises(PolicyEngineUnavailable, match="do not compile"):
        EmbeddedEngine(broken).evaluate(
            default_matrix(policy_bundle),
            _input(policy_bundle, _example(examples_dir, "hw-b200-pool.yaml")),
        )


def test_unreachable_opa_is_engine_unavailable(
    policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    engine = OpaEngine(f"http://127.0.0.1:{free_port()}", policy_bundle, timeout_s=2)
    policy_input = _input(policy_bundle, _example(examples_dir, "hw-b200-pool.yaml"))
    with pytest.raises(PolicyEngineUnavailable):
        engine.evaluate(default_matrix(policy_bundle), policy_input)
    with pytest.raises(PolicyEngineUnavailable):
        engine.check_ready()


@pytest.mark.opa
def test_opa_reloads_after_its_policies_vanish(
    opa_url: str, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    engine = OpaEngine(opa_url, policy_bundle)
    matrix = default_matrix(policy_bundle)
    policy_input = _input(policy_bundle, _example(examples_dir, "hw-h100-pool-a.yaml"))
    first = engine.evaluate(matrix, policy_input)
    # Someone else (or a restart) wipes OPA: policies and data gone.
    _wipe(opa_url)
    assert engine.evaluate(matrix, policy_input) == first
    assert first.verdict == "experimental"


def _wipe(opa_url: str) -> None:
    """Delete every policy (dependents first: OPA refuses to orphan a module) and all data."""
    for _ in range(20):
        policies = requests.get(f"{opa_url}/v1/policies", timeout=5).json()["result"]
        if not policies:
            break
        for policy in policies:
            requests.delete(f"{opa_url}/v1/policies/{policy['id']}", timeout=5)
    assert requests.get(f"{opa_url}/v1/policies", timeout=5).json()["result"] == []
    requests.put(f"{opa_url}/v1/data", json={}, timeout=5).raise_for_status()


@pytest.mark.opa
def test_opa_with_a_foreign_revision_is_reloaded(
    opa_url: str, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    engine = OpaEngine(opa_url, policy_bundle)
    matrix = default_matrix(policy_bundle)
    policy_input = _input(policy_bundle, _example(examples_dir, "hw-rtx4090-workstation.yaml"))
    engine.evaluate(matrix, policy_input)
    requests.put(
        f"{opa_url}/v1/data/supportgate_meta",
        json={"policy_revision": "sha256:other", "matrix_key": matrix.key},
        timeout=5,
    ).raise_for_status()
    assert engine.evaluate(matrix, policy_input).verdict == "rejected"
    meta = requests.get(f"{opa_url}/v1/data/supportgate_meta", timeout=5).json()["result"]
    assert meta["policy_revision"] == policy_bundle.revision


def test_opa_url_must_be_http(policy_bundle: PolicyBundle) -> None:
    with pytest.raises(UsageError, match="SUPPORTGATE_OPA_URL"):
        OpaEngine("127.0.0.1:8181", policy_bundle)
