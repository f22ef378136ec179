"""An organisation rule that misbehaves on an input no example covers never fails evaluation,
on either engine, and both answer alike (docs/organisation-policies.md, "When an organisation
rule misbehaves"): a malformed finding is left out and a warn names its rule; a rule that
fails to evaluate leaves the built-in decision, with a warn of rule `org`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import yaml

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Subject, no_tracked_hardware
from supportgate.manifests import decode_manifest
from supportgate.manifests.decision import PolicyResult
from supportgate.policy import EmbeddedEngine, PolicyBundle, PolicyEngine
from supportgate.policy.engine import LoadedMatrix
from supportgate.policy.engine_process import ProcessEngine
from supportgate.policy.inputs import PolicyInput
from supportgate.policy.opa_bundle import BundleSigner, build_bundle

from ..engines import EXAMPLE_TIME, make_evaluator, opa_engine
from ..opa import default_matrix_document, running_opa, serving_bundle, shared_credentials
from ..waiting import wait_until

pytestmark = pytest.mark.opa

# Both rules pass `policy check`: no example manifest is named for them.
FRAGILE = """package supportgate.org.fragile

# Two bodies that agree for most inputs, and conflict (an evaluation error) between 10 and 100.
_size(nodes) := "small" if nodes < 100

_size(nodes) := "large" if nodes > 10

# METADATA
# title: A message that is a number
# description: Emits the node count itself as its message, a malformed finding.
# custom:
#   id: org.fragile.message
#   severity: deny
deny contains {"rule": "org.fragile.message", "message": nodes, "path": "spec"} if {
	input.manifest.metadata.name == "fragile-message"
	nodes := input.manifest.spec.nodes
}

# METADATA
# title: A helper that fails
# description: Calls a helper whose bodies conflict for this input.
# custom:
#   id: org.fragile.helper
#   severity: deny
deny contains {"rule": "org.fragile.helper", "message": message, "path": "spec.nodes"} if {
	input.manifest.metadata.name == "fragile-helper"
	message := sprintf("a %v pool", [_size(input.manifest.spec.nodes)])
}
"""

POOL = Path(__file__).resolve().parents[2] / "examples" / "manifests" / "hw-h100-pool-a.yaml"


Fragile = dict[str, tuple[PolicyEngine, PolicyBundle]]


@pytest.fixture(scope="module")
def fragile(opa_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fragile]:
    """The built-in policies alone (embedded), and with the fragile bundle on both engines."""
    directory = tmp_path_factory.mktemp("bundles") / "fragile"
    directory.mkdir()
    (directory / "fragile.rego").write_text(FRAGILE)
    policies = PolicyBundle.load(DEFAULT_POLICY_DIR, (directory,))
    credentials = shared_credentials()
    signer = BundleSigner.from_file(credentials.signing_key)
    archive = build_bundle(policies, default_matrix_document(policies), signer).archive
    builtin = PolicyBundle.load(DEFAULT_POLICY_DIR)
    with (
        serving_bundle(credentials, archive) as service,
        running_opa(opa_binary, bundle_service=service) as opa,
    ):
        wait_until(
            lambda: requests.get(f"{opa.url}/health?bundles", timeout=5).status_code == 200,
            "OPA to activate the bundle",
        )
        on_opa, in_child = opa_engine(opa.url, policies), ProcessEngine(policies)
        yield {
            "builtin": (EmbeddedEngine(builtin), builtin),
            "embedded": (EmbeddedEngine(policies), policies),
            "opa": (on_opa, policies),
            "process": (in_child, policies),
        }
        on_opa.close()
        in_child.close()


def policy_input(fragile: Fragile, which: str, name: str) -> tuple[LoadedMatrix, PolicyInput]:
    engine, policies = fragile[which]
    document = yaml.safe_load(POOL.read_text())
    document["metadata"]["name"] = name
    document["spec"]["nodes"] = 50
    manifest = decode_manifest(yaml.safe_dump(document).encode(), fmt="yaml")
    evaluator = make_evaluator(engine, policies)
    built = evaluator.policy_input(
        Subject(manifest), evaluated_at=EXAMPLE_TIME, hardware=no_tracked_hardware
    )
    return evaluator.matrix, built


def _many(built: tuple[LoadedMatrix, PolicyInput]) -> tuple[LoadedMatrix, list[PolicyInput]]:
    matrix, one = built
    return matrix, [one]


def decide(fragile: Fragile, which: str, name: str) -> PolicyResult:
    return fragile[which][0].evaluate(*policy_input(fragile, which, name))


@pytest.mark.parametrize(
    ("name", "rule", "says"),
    [
        ("fragile-message", "org.fragile.message", "emitted a malformed deny finding"),
        ("fragile-helper", "org", "an organisation rule failed to evaluate"),
    ],
)
def test_a_misbehaving_org_rule_leaves_the_built_in_verdict_and_a_warn(
    fragile: Fragile, name: str, rule: str, says: str
) -> None:
    """Both used to fail the evaluation (503 for the manifest): the message is no string, the
    helper's bodies conflict."""
    builtin = decide(fragile, "builtin", name)
    embedded = decide(fragile, "embedded", name)
    assert decide(fragile, "opa", name) == embedded
    assert decide(fragile, "process", name) == embedded
    process, _ = fragile["process"]
    assert process.evaluate_many(*_many(policy_input(fragile, "process", name))) == [embedded]
    assert embedded.verdict == builtin.verdict
    [warn] = [violation for violation in embedded.violations if violation.rule == rule]
    assert warn.severity == "warn"
    assert says in warn.message
    others = [violation for violation in embedded.violations if violation.rule != rule]
    assert others == list(builtin.violations)
