"""Each concern's examples (policies/supportgate/<concern>/examples/, tests/policy_examples.py)
fire exactly the concern's rules their suite.yaml.example names, on both engines, and together they
fire every rule of every concern."""

from __future__ import annotations

import pytest

from supportgate.policy import PolicyBundle
from supportgate.policy.catalog import read_catalog

from ..engines import make_engine, make_evaluator
from ..policy_examples import CONCERNS, SUFFIX, SUITE_FILE, examples, examples_dir, suite


def _concern_rules(policy_bundle: PolicyBundle, concern: str) -> set[str]:
    """The rule ids declared in the concern's modules (the rule catalog)."""
    catalog = read_catalog(policy_bundle.modules).values()
    return {rule.id for rule in catalog if rule.module.startswith(f"supportgate/{concern}/")}


def test_every_example_matches_its_suite(
    engine_kind: str, policy_bundle: PolicyBundle, request: pytest.FixtureRequest
) -> None:
    opa_url = request.getfixturevalue("opa_url") if engine_kind == "opa" else None
    engine = make_engine(engine_kind, policy_bundle, opa_url)
    request.addfinalizer(engine.close)
    evaluator = make_evaluator(engine, policy_bundle)
    problems = {}
    for example in examples():
        fired = example.evaluate(evaluator).rules() & _concern_rules(policy_bundle, example.concern)
        if fired != example.expected:
            problems[example.name] = {"fired": sorted(fired), "expected": sorted(example.expected)}
    assert problems == {}


@pytest.mark.parametrize("concern", CONCERNS)
def test_the_examples_fire_every_rule_of_their_concern(
    policy_bundle: PolicyBundle, concern: str
) -> None:
    rules = _concern_rules(policy_bundle, concern)
    assert rules, f"the catalog has no rules in supportgate/{concern}/"
    shown = set().union(*suite(concern).examples.values())
    assert rules - shown == set(), "rules no example fires"
    assert shown - rules == set(), "rules the suite names that the concern does not declare"


@pytest.mark.parametrize("concern", CONCERNS)
def test_every_file_is_in_the_suite_and_named_for_what_it_shows(concern: str) -> None:
    files = {path.name for path in examples_dir(concern).iterdir()} - {SUITE_FILE}
    wanted = suite(concern).examples
    assert files == set(wanted)
    for file, rules in wanted.items():
        assert file.startswith("allowed-" if not rules else "denied-"), file
        assert file.endswith(SUFFIX), file


def test_opa_reads_no_example_as_data(policy_bundle: PolicyBundle) -> None:
    """`opa test policies` merges every data file under the directory into `data`: the only
    ones there are the default matrix and its prepared form (docs/policy-interface.md)."""
    data_files = {
        path.relative_to(policy_bundle.directory).as_posix()
        for path in policy_bundle.directory.rglob("*")
        if path.suffix in {".json", ".yaml", ".yml"}
    }
    assert data_files == {"matrix/data.yaml", "supportgate/prepared/data.json"}
