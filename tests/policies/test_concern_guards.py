"""The decision reads some concerns' deny or warn sets only behind the concern's `applies`, and
its recommendations for unlisted manifests only behind standing.unlisted
(policies/supportgate/decision/decision.rego), which spares regorus their rules. That guard must
be a shortcut only: each guarded set is empty whenever `applies` fails. Checked on every example
the project ships and on generated manifests and matrices, so a rule added to a guarded set
that fires without `applies` fails here rather than going unreported."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import msgspec
import pytest
import regorus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import decode_manifest, decode_manifests, decode_matrix
from supportgate.matrix import prepare
from supportgate.policy import EmbeddedEngine, PolicyBundle
from supportgate.policy.engine import LoadedMatrix
from supportgate.policy.inputs import PolicyInput

from .. import strategies
from ..engines import EXAMPLE_TIME, default_matrix, example_pools
from ..policy_examples import examples

pytestmark = pytest.mark.fast

GUARDED = re.compile(
    r"\{found \| data\.supportgate\.(\w+)\.applies; "
    r"some found in data\.supportgate\.\1\.(deny|warn)\}"
)


# The decision reads its recommendations for unlisted manifests only behind standing.unlisted.
UNLISTED_RECOMMENDATIONS = (
    '"decision._unlisted_recommendations": '
    "[[1 | data.supportgate.lib.standing.unlisted] != [], "
    "data.supportgate.decision._unlisted_recommendations]"
)


def guarded_sets(bundle: PolicyBundle) -> list[tuple[str, str]]:
    decision = (bundle.directory / "supportgate" / "decision" / "decision.rego").read_text()
    return GUARDED.findall(decision)


def regorus_engine(bundle: PolicyBundle, matrix: LoadedMatrix, *extra: str) -> regorus.Engine:
    engine = regorus.Engine()
    for name, text in bundle.modules:
        engine.add_policy(name, text)
    for number, text in enumerate(extra):
        engine.add_policy(f"extra{number}.rego", text)
    engine.add_data_json(matrix.data_json())
    return engine


def unguarded(
    engine: regorus.Engine, sets: list[tuple[str, str]], policy_input: PolicyInput
) -> list[str]:
    """`concern.set: rule ids` for each guarded set with findings while `applies` fails."""
    probes = ",\n".join(
        [
            f'"{concern}.{kind}": [[1 | data.supportgate.{concern}.applies] != [], '
            f"{{f.rule | some f in data.supportgate.{concern}.{kind}}}]"
            for concern, kind in sets
        ]
        + [UNLISTED_RECOMMENDATIONS]
    )
    engine.add_policy("guard_probe.rego", f"package guard_probe\n\nfound := {{{probes}}}\n")
    engine.set_input_json(policy_input.canonical.decode())
    value = engine.eval_query("data.guard_probe.found")["result"][0]["expressions"][0]["value"]
    return sorted(
        f"{name}: {', '.join(sorted(rules))}"
        for name, (applies, rules) in value.items()
        if rules and not applies
    )


def _inputs_of_examples(bundle: PolicyBundle, examples_dir: Path) -> list[PolicyInput]:
    evaluator = Evaluator(EmbeddedEngine(bundle), default_matrix(bundle))
    found = [
        evaluator.policy_input(
            Subject(example.manifest),
            evaluated_at=example.evaluated_at,
            hardware={pool.metadata.name: pool for pool in example.pools}.get,
        )
        for example in examples()
    ]
    pools = example_pools(examples_dir)
    for path in sorted(examples_dir.glob("*.yaml")):
        for manifest in decode_manifests(path.read_bytes(), fmt="yaml", source=str(path)):
            subject = Subject(manifest)
            found.append(
                evaluator.policy_input(subject, evaluated_at=EXAMPLE_TIME, hardware=pools.get)
            )
    return found


def test_every_guarded_set_of_the_decision_is_found(policy_bundle: PolicyBundle) -> None:
    names = {f"{concern}.{kind}" for concern, kind in guarded_sets(policy_bundle)}
    assert {"host.deny", "port.deny", "hardware.deny", "evidence.warn"} <= names


def test_no_example_has_findings_its_guard_hides(
    policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    engine = regorus_engine(policy_bundle, default_matrix(policy_bundle))
    sets = guarded_sets(policy_bundle)
    inputs = _inputs_of_examples(policy_bundle, examples_dir)
    assert len(inputs) > 50
    assert {
        repr(i.document["manifest"]["metadata"]): unguarded(engine, sets, i) for i in inputs
    } == {repr(i.document["manifest"]["metadata"]): [] for i in inputs}


@pytest.mark.parametrize(
    ("careless", "breach"),
    [
        (
            "package supportgate.port\n\n"
            'deny contains {"rule": "port.careless", "path": "spec", "message": "m"} if {\n'
            '\tinput.manifest.kind == "HardwareManifest"\n}\n',
            "port.deny: port.careless",
        ),
        (
            "package supportgate.decision\n\n"
            '_unlisted_recommendations contains "careless" if {\n'
            '\tinput.manifest.kind == "HardwareManifest"\n}\n',
            "decision._unlisted_recommendations: careless",
        ),
    ],
    ids=["concern-rule", "unlisted-recommendation"],
)
def test_a_rule_that_fires_without_its_guard_is_caught(
    policy_bundle: PolicyBundle, examples_dir: Path, careless: str, breach: str
) -> None:
    engine = regorus_engine(policy_bundle, default_matrix(policy_bundle), careless)
    sets = guarded_sets(policy_bundle)
    caught = [unguarded(engine, sets, i) for i in _inputs_of_examples(policy_bundle, examples_dir)]
    assert [breach] in caught


@cache
def _default_bundle() -> PolicyBundle:
    return PolicyBundle.load(DEFAULT_POLICY_DIR)  # not a fixture: hypothesis would print it


@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(matrix=st.none() | strategies.matrices(), document=strategies.manifests())
def test_no_generated_manifest_has_findings_its_guard_hides(
    matrix: dict[str, object] | None, document: dict[str, object]
) -> None:
    bundle = _default_bundle()
    loaded = (
        default_matrix(bundle)
        if matrix is None
        else prepare(decode_matrix(msgspec.json.encode(matrix), fmt="json"))
    )
    evaluator = Evaluator(EmbeddedEngine(bundle), loaded)
    subject = Subject(decode_manifest(json.dumps(document).encode(), fmt="json"))
    policy_input = evaluator.policy_input(
        subject, evaluated_at=EXAMPLE_TIME, hardware=lambda _: None
    )
    engine = regorus_engine(bundle, loaded)
    assert unguarded(engine, guarded_sets(bundle), policy_input) == []
