"""Every rule id of docs/manifests.md is in the policies with METADATA that matches its
rule head, and has Rego tests where it fires and where it stays quiet."""

from __future__ import annotations

import re

import pytest

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.errors import UsageError
from supportgate.policy import PolicyBundle
from supportgate.policy.catalog import RuleInfo, read_catalog
from supportgate.policy.rego_parse import parse_module
from supportgate.reports.rules import rule_anchor
from supportgate.reports.rules_page import render_rules_page

pytestmark = pytest.mark.fast

CONTRACT_DENY = {
    "host.os",
    "host.compiler",
    "host.python",
    "support.engine",
    "hardware.accelerator-arch",
    "port.production",
    "port.production-stack",
    "port.isolation",
    "port.pinning",
    "port.arch-dependencies",
    "service.kv_cache",
    "service.pd_orchestration",
    "service.load_balancing",
    "service.authentication",
    "service.http_transport",
    "service.api_compatibility",
    "service.not-provided",
    "service.recipe-scope",
    "topology.capacity",
    "manifest.hardware-ref",
}
CONTRACT_WARN = {
    "support.platform",
    "support.toolkit",
    "support.model",
    "support.alternative",
    "claims.correctness",
    "claims.performance",
    "service.external",
    "evidence.stale",
    "port.consumer-card",
    "topology.scale-up-domain",
    # CONTRACT section 10.1 and 10.7
    "evidence.unreferenced",
    "evidence.future",
    "evidence.incomplete",
    "port.pin-drift",
}


@pytest.fixture(scope="module")
def catalog(policy_bundle: PolicyBundle) -> dict[str, RuleInfo]:
    return read_catalog(policy_bundle.modules)


@pytest.fixture(scope="module")
def rego_test_names() -> set[str]:
    names: set[str] = set()
    for path in DEFAULT_POLICY_DIR.rglob("*_test.rego"):
        names.update(re.findall(r"^(test_\w+)\b", path.read_text(), flags=re.MULTILINE))
    return names


def test_catalog_holds_exactly_the_contract_rules(catalog: dict[str, RuleInfo]) -> None:
    assert {i for i, r in catalog.items() if r.severity == "deny"} == CONTRACT_DENY
    assert {i for i, r in catalog.items() if r.severity == "warn"} == CONTRACT_WARN


def test_metadata_matches_the_rule_head(
    catalog: dict[str, RuleInfo], policy_bundle: PolicyBundle
) -> None:
    """The catalogue reads the built-in METADATA as text; the parser says which rule head each
    block stands above: the set it adds to is the severity, the `rule` it emits the id."""
    heads: dict[str, tuple[str, str | None]] = {}
    for module, text in policy_bundle.modules:
        for head in parse_module(module, text).rules:
            custom = (head.metadata or {}).get("custom") or {}
            if "id" in custom:
                heads[custom["id"]] = (head.name, (head.fields or {}).get("rule"))
    assert set(heads) == set(catalog)
    for rule_id, rule in catalog.items():
        assert heads[rule_id] == (rule.severity, rule_id), rule
        assert rule.title, rule_id
        assert rule.description, rule_id


@pytest.mark.parametrize("rule_id", sorted(CONTRACT_DENY | CONTRACT_WARN))
def test_every_rule_has_a_firing_and_a_quiet_rego_test(
    rule_id: str, rego_test_names: set[str]
) -> None:
    prefix = "test_" + re.sub(r"[.-]", "_", rule_id) + "_"
    tests = {name for name in rego_test_names if name.startswith(prefix)}
    assert any("_fires" in name for name in tests), (rule_id, sorted(tests))
    assert any("_quiet" in name for name in tests), (rule_id, sorted(tests))


def test_ids_are_not_declared_twice(policy_bundle: PolicyBundle) -> None:
    host = next(m for m in policy_bundle.modules if m[0].endswith("host/host.rego"))
    with pytest.raises(
        UsageError, match=r"host\.os is also declared in supportgate/host/host\.rego"
    ):
        read_catalog([host, ("copy.rego", host[1])])


def test_every_rule_says_how_to_fix_it(catalog: dict[str, RuleInfo]) -> None:
    """custom.remediation: the text SARIF's help and docs/rules.md give under "How to fix"."""
    for rule_id, rule in catalog.items():
        assert rule.remediation, rule_id
        assert rule.remediation.endswith("."), rule_id
        assert rule.remediation != rule.description, rule_id


def test_the_rules_page_is_generated_from_the_catalogue(
    catalog: dict[str, RuleInfo], pytestconfig: pytest.Config
) -> None:
    """docs/rules.md never drifts: regenerate it with python -m supportgate.reports.rules_page
    --write. Every rule's SARIF helpUri anchor is on the page, once."""
    page = (pytestconfig.rootpath / "docs" / "rules.md").read_text(encoding="utf-8")
    assert page == render_rules_page(catalog)
    for rule_id in catalog:
        assert page.count(f'<a id="{rule_anchor(rule_id)}"></a>') == 1, rule_id
    assert len({rule_anchor(rule_id) for rule_id in catalog}) == len(catalog)
