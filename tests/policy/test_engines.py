"""The engines' contract beyond parity: caching, concurrency, revisions, and failures that
must become engine errors, never verdicts."""

from __future__ import annotations

import secrets
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import pytest
import requests

from supportgate.errors import PolicyEngineUnavailable, UsageError
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import Manifest, decode_manifest
from supportgate.policy import EmbeddedEngine, PolicyBundle
from supportgate.policy.inputs import PolicyInput
from supportgate.policy.opa import OpaEngine
from supportgate.policy.opa_bundle import BundleSigner, build_bundle, bundle_files
from supportgate.policy.opa_setup import setup

from ..engines import EXAMPLE_TIME, default_matrix, opa_engine
from ..opa import expected_revision, running_opa, serving_bundle, shared_credentials
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
    engine = opa_engine(f"http://127.0.0.1:{free_port()}", policy_bundle, timeout_s=2)
    policy_input = _input(policy_bundle, _example(examples_dir, "hw-b200-pool.yaml"))
    with closing(engine):
        with pytest.raises(PolicyEngineUnavailable):
            engine.evaluate(default_matrix(policy_bundle), policy_input)
        with pytest.raises(PolicyEngineUnavailable):
            engine.check_ready()


@pytest.mark.opa
def test_opa_holding_another_bundle_revision_answers_nothing(
    opa_url: str, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    """A service whose bundle differs from OPA's (an upgrade OPA has not pulled yet, or an
    OPA serving someone else's bundle) gets no verdict from it."""
    matrix = default_matrix(policy_bundle)
    policy_input = _input(policy_bundle, _example(examples_dir, "hw-h100-pool-a.yaml"))
    held = expected_revision(policy_bundle)
    token = shared_credentials().api_token
    other_revision = "sha256:" + "0" * 64
    with (
        closing(opa_engine(opa_url, policy_bundle)) as engine,
        closing(
            OpaEngine(opa_url, policy_bundle, bundle_revision=other_revision, token=token)
        ) as other,
    ):
        assert engine.evaluate(matrix, policy_input).verdict == "experimental"
        engine.check_ready()
        with pytest.raises(PolicyEngineUnavailable, match=f"holds bundle revision '{held}'"):
            other.evaluate(matrix, policy_input)
        with pytest.raises(PolicyEngineUnavailable, match="holds bundle revision"):
            other.check_ready()


@pytest.mark.opa
def test_opa_refuses_another_token(opa_url: str, policy_bundle: PolicyBundle) -> None:
    revision = expected_revision(policy_bundle)
    guessed = secrets.token_urlsafe(32)
    engine = OpaEngine(opa_url, policy_bundle, bundle_revision=revision, token=guessed)
    with closing(engine), pytest.raises(PolicyEngineUnavailable, match="refused the service's"):
        engine.check_ready()


@pytest.mark.opa
def test_opa_without_the_bundle_answers_nothing(
    opa_binary: str, policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    """OPA whose bundle service is down (or not up yet) holds no bundle: no verdict."""
    nowhere = f"http://127.0.0.1:{free_port()}/v1/bundles"
    with (
        running_opa(opa_binary, bundle_service=nowhere) as opa,
        closing(opa_engine(opa.url, policy_bundle)) as engine,
    ):
        policy_input = _input(policy_bundle, _example(examples_dir, "hw-h100-pool-a.yaml"))
        with pytest.raises(PolicyEngineUnavailable, match="holds no supportgate bundle"):
            engine.evaluate(default_matrix(policy_bundle), policy_input)
        with pytest.raises(PolicyEngineUnavailable, match="holds no supportgate bundle"):
            engine.check_ready()


@pytest.mark.opa
def test_opa_refuses_a_bundle_signed_with_another_key(
    opa_binary: str, policy_bundle: PolicyBundle, examples_dir: Path, tmp_path: Path
) -> None:
    """OPA verifies the signature: the same files signed with a key it does not hold (a
    bundle server someone else runs) are never activated."""
    setup(tmp_path / "other.pem", tmp_path / "other")
    other = BundleSigner.from_file(tmp_path / "other.pem")
    forged = build_bundle(policy_bundle, default_matrix(policy_bundle).document, other)
    credentials = shared_credentials()
    with (
        serving_bundle(credentials, forged.archive) as service,
        running_opa(opa_binary, bundle_service=service) as opa,
        closing(opa_engine(opa.url, policy_bundle)) as engine,
    ):
        policy_input = _input(policy_bundle, _example(examples_dir, "hw-h100-pool-a.yaml"))
        with pytest.raises(PolicyEngineUnavailable, match="holds no supportgate bundle"):
            engine.evaluate(default_matrix(policy_bundle), policy_input)
        status = requests.get(f"{opa.url}/health?bundles", timeout=5)
        assert status.status_code != 200


@pytest.mark.opa
def test_the_bundles_entry_module_is_formatted_and_strict(
    opa_binary: str, policy_bundle: PolicyBundle, tmp_path: Path
) -> None:
    """The module the service writes into its bundle, held to the policies' own checks."""
    for name, content in bundle_files(
        policy_bundle, default_matrix(policy_bundle).document
    ).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(content)
    for check in (["fmt", "--fail", "--list"], ["check", "--strict"]):
        done = subprocess.run(
            [opa_binary, *check, str(tmp_path / "supportgate")], capture_output=True, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_opa_url_must_be_http(policy_bundle: PolicyBundle) -> None:
    with pytest.raises(UsageError, match="SUPPORTGATE_OPA_URL"):
        opa_engine("127.0.0.1:8181", policy_bundle)
