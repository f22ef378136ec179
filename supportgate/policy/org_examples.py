"""A bundle evaluated on the shipped example manifests before it may load (CONTRACT 11.2): one
that fails here would fail (or mislead) every evaluation. The examples: each concern's
`examples/*.yaml.example` (installed with the policies) and, in a checkout, examples/manifests/.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import regorus

from supportgate.errors import InputError
from supportgate.manifests import HardwareManifest, Manifest, decode_manifests

from .inputs import build_input, hardware_spec
from .org_check import Problem
from .rego_parse import FINDING_SETS, ParsedModule, syntax_error

if TYPE_CHECKING:
    from .bundle import PolicyBundle

SHIPPED_EXAMPLES = Path("examples") / "manifests"
DECISION_RULE = "data.supportgate.decision.result"
MISBEHAVED_RULE = "data.supportgate.decision.org_misbehaved"


def example_problems(
    policies: PolicyBundle, parsed: Mapping[str, ParsedModule], where: Mapping[str, str]
) -> list[Problem]:
    engine = regorus.Engine()
    for name, text in policies.modules:
        engine.add_policy(name, text)
    engine.add_data_json(policies.default_matrix().data_json())
    declared = {
        rule_id: (where[name], rule.line)
        for name, module in parsed.items()
        for rule in module.rules
        if rule.name in FINDING_SETS and rule.fields and (rule_id := rule.fields.get("rule"))
    }
    at = datetime.now(UTC)
    for example, manifests in _examples(policies.directory):
        pools = {m.metadata.name: m for m in manifests if isinstance(m, HardwareManifest)}
        for manifest in manifests:
            document = build_input(
                msgspec.to_builtins(manifest),
                evaluated_at=at,
                hardware=hardware_spec(manifest, pools.get),
            )
            engine.set_input_json(document.canonical.decode())
            problems = _evaluation_problems(
                engine, declared, where, f"{example} ({manifest.metadata.name})"
            )
            if problems:
                return problems
    return []


def _evaluation_problems(
    engine: regorus.Engine,
    declared: Mapping[str, tuple[str, int]],
    where: Mapping[str, str],
    example: str,
) -> list[Problem]:
    """What the decision says of the bundle's findings on this example: the decision owns what
    a well-formed finding is (decision.rego's `org_misbehaved`)."""
    try:
        misbehaved = json.loads(engine.eval_rule_as_json(MISBEHAVED_RULE)) or []
        engine.eval_rule_as_json(DECISION_RULE)
    except RuntimeError as exc:
        error = syntax_error(exc, "")
        file = where.get(error.module) or next(iter(where.values()))
        return [Problem(file, error.line, f"fails on the example {example}: {error.message}")]
    return [
        Problem(
            *declared.get(warn["rule"], (next(iter(where.values())), 1)),
            f"on the example {example}, {warn['message']}. Emit rule, message and path, "
            "each a string, and nothing else",
        )
        for warn in misbehaved[:1]
    ]


def _examples(directory: Path) -> Iterator[tuple[str, Sequence[Manifest]]]:
    for path in sorted(directory.rglob("*/examples/*.yaml.example")):
        if path.name != "suite.yaml.example":
            yield path.relative_to(directory).as_posix(), _read(path)
    shipped = directory.parent / SHIPPED_EXAMPLES
    fleet = [
        manifest
        for path in sorted(shipped.glob("*.yaml"))
        if path.name != "expected.yaml"
        for manifest in _read(path)
    ]
    if fleet:
        yield SHIPPED_EXAMPLES.as_posix(), fleet


def _read(path: Path) -> list[Manifest]:
    try:
        return decode_manifests(path.read_bytes(), fmt="yaml", source=str(path))
    except (OSError, InputError):
        return []  # an example this release cannot read checks nothing, and refuses nothing
