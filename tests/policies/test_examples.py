"""The examples give exactly the decisions in expected.yaml, on both engines, and together
they show every verdict and every rule id of the policies."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from supportgate.evaluations.evaluator import Subject
from supportgate.manifests import HardwareManifest, Manifest, decode_manifest
from supportgate.policy import PolicyBundle
from supportgate.policy.catalog import read_catalog

from ..engines import make_engine, make_evaluator
from ..examples import expected


def _load(examples: Path, name: str) -> Manifest:
    return decode_manifest((examples / name).read_bytes(), fmt="yaml", source=name)


def test_every_example_file_has_an_expectation(examples_dir: Path) -> None:
    files = {path.name for path in examples_dir.iterdir()}
    assert files == set(expected().decisions)


def test_every_example_matches_expected(
    engine_kind: str,
    policy_bundle: PolicyBundle,
    examples_dir: Path,
    request: pytest.FixtureRequest,
) -> None:
    opa_url = request.getfixturevalue("opa_url") if engine_kind == "opa" else None
    engine = make_engine(engine_kind, policy_bundle, opa_url)
    request.addfinalizer(engine.close)
    evaluator = make_evaluator(engine, policy_bundle)
    wanted = expected()
    manifests = {name: _load(examples_dir, name) for name in wanted.decisions}
    pools = {m.metadata.name: m for m in manifests.values() if isinstance(m, HardwareManifest)}
    problems = {}
    for name, want in wanted.decisions.items():
        decision = evaluator.evaluate(
            Subject(manifests[name]), evaluated_at=wanted.evaluated_at, hardware=pools.get
        ).decision
        assert decision.allowed == (decision.verdict != "rejected"), name
        if found := want.problems(decision.verdict, decision.rules(), exact=True):
            problems[name] = found
    assert problems == {}


def test_the_examples_show_every_verdict_and_rule(policy_bundle: PolicyBundle) -> None:
    decisions = expected().decisions.values()
    assert {want.verdict for want in decisions} == {"supported", "experimental", "rejected"}
    shown = set().union(*(want.rules for want in decisions))
    assert set(read_catalog(policy_bundle.modules)) - shown == set()


def test_unresolved_hardware_ref_is_rejected(
    policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    evaluator = make_evaluator(make_engine("embedded", policy_bundle, None), policy_bundle)
    deployment = _load(examples_dir, "dep-b200-offline.yaml")
    decision = evaluator.evaluate(
        Subject(deployment), evaluated_at=expected().evaluated_at
    ).decision
    assert decision.verdict == "rejected"
    assert "manifest.hardware-ref" in decision.rules("deny")


_RULE_ROW = re.compile(  # | `rule` | severity | fires when | [file](link) |
    r"^\| `(?P<rule>[a-z_.-]+)` \| (?P<severity>deny|warn) \| .* "
    r"\| \[(?P<file>[\w.-]+)\]\((?P<link>[^)]+)\) \|$",
    re.MULTILINE,
)


def test_the_manifests_page_names_every_rule_and_an_example_that_shows_it(
    policy_bundle: PolicyBundle, examples_dir: Path
) -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "manifests.md"
    rows = list(_RULE_ROW.finditer(page.read_text("utf-8")))
    catalog = read_catalog(policy_bundle.modules)
    assert sorted(row["rule"] for row in rows) == sorted(catalog)
    decisions = expected().decisions
    for row in rows:
        assert row["severity"] == catalog[row["rule"]].severity, row[0]
        assert row["link"] == f"../examples/manifests/{row['file']}", row[0]
        assert row["rule"] in decisions[row["file"]].rules, row[0]
