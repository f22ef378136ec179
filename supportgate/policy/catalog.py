"""The rule catalogue, read from the METADATA blocks (regorus cannot read annotations): an
organisation's from the Rego parse, the built-in ones (trusted, and read at every `check`,
where the parse would cost ~190 ms) from the text, which tests/policies/test_catalog.py holds
against the parse.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from supportgate.errors import UsageError

from .org import MODULE_PREFIX
from .rego_parse import FINDING_SETS, parse_module

# libyaml's safe loader when PyYAML has it: every `supportgate check` reads the ~30 METADATA
# blocks, and PyYAML's pure-Python loader takes ~10 ms over them (bench/bench_cli_startup.py).
_METADATA_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
BUILTIN_SOURCE = "builtin"


@dataclass(frozen=True, slots=True)
class RuleInfo:
    id: str
    severity: str
    title: str
    description: str
    remediation: str
    module: str = ""
    source: str = BUILTIN_SOURCE  # or the organisation bundle's name


def read_catalog(modules: Iterable[tuple[str, str]]) -> dict[str, RuleInfo]:
    catalog: dict[str, RuleInfo] = {}
    for module, text in modules:
        rules = _org_rules if module.startswith(MODULE_PREFIX) else _module_rules
        for info in rules(module, text):
            if info.id in catalog and catalog[info.id].module == module:
                continue  # another body of the same rule (an OR)
            if info.id in catalog:
                raise UsageError(
                    f"{module}: rule id {info.id} is also declared in {catalog[info.id].module}",
                    field=None,
                )
            catalog[info.id] = info
    return catalog


def _module_rules(module: str, text: str) -> Iterable[RuleInfo]:
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if lines[index].strip() != "# METADATA":
            index += 1
            continue
        block: list[str] = []
        index += 1
        while index < len(lines) and lines[index].startswith("#"):
            block.append(lines[index][2:] if lines[index].startswith("# ") else lines[index][1:])
            index += 1
        annotation = yaml.load("\n".join(block), Loader=_METADATA_LOADER) or {}  # noqa: S506 - safe
        if "id" in (annotation.get("custom") or {}):
            yield _rule_info(annotation, module)


def _org_rules(module: str, text: str) -> Iterable[RuleInfo]:
    for rule in parse_module(module, text).rules:
        annotation = rule.metadata or {}
        custom = annotation.get("custom")
        if rule.name not in FINDING_SETS or not isinstance(custom, dict) or "id" not in custom:
            continue
        yield _rule_info(annotation, module)


def _rule_info(annotation: dict[str, Any], module: str) -> RuleInfo:
    custom = annotation["custom"]
    return RuleInfo(
        id=str(custom["id"]),
        severity=str(custom.get("severity", "")),
        title=str(annotation.get("title", "")),
        description=_one_line(annotation.get("description")),
        remediation=_one_line(custom.get("remediation")),
        module=module,
        source=module.removeprefix(MODULE_PREFIX).split("/", 1)[0]
        if module.startswith(MODULE_PREFIX)
        else BUILTIN_SOURCE,
    )


def _one_line(value: object) -> str:
    return " ".join(str(value or "").split())
