"""What an organisation bundle may not do, checked on the Rego parse (CONTRACT 11.2,
docs/organisation-policies.md); then every module compiles beside the built-in ones (and
OPA's compiler accepts them: opa_check.py), and the bundle is evaluated on the shipped
examples (org_examples.py). Each problem names its file and line, and what to write instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import regorus

from supportgate.errors import UsageError

from .catalog import read_catalog
from .org import BUNDLES_SETTING, OrgBundle
from .rego_parse import (
    FINDING_SETS,
    ParsedModule,
    RegoSyntaxError,
    Rule,
    parse_module,
    syntax_error,
)

if TYPE_CHECKING:
    from .bundle import PolicyBundle

ID_PREFIX = "org."
FINDING_FIELDS = ("rule", "message", "path")
FORBIDDEN_CALLS = ("http.send", "opa.runtime", "time.now_ns", "trace")
FORBIDDEN_FAMILIES = ("net.", "rand.", "uuid.")
_ORG_PACKAGE = re.compile(r"supportgate\.org\.[a-z_][a-z0-9_]*")
# Rego ends a line at \n only; Python, YAML and editors also at these, which lets a module show
# a person (or a line-based tool) a line the parser never sees.
_OTHER_BREAK = re.compile("\r(?!\n)|[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_SHAPE = (
    '{set} contains {{"rule": "<its METADATA custom.id>", "message": ..., "path": ...}}'
    " if {{ ... }}"
)


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class PolicyRefused(UsageError):
    """An organisation bundle that fails its check; `problems` name each file and line."""

    def __init__(self, problems: Sequence[Problem], *, field: str | None) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"  {problem}" for problem in problems)
        super().__init__(f"organisation policies refused:\n{lines}", field=field)


@dataclass(slots=True)
class _Declared:
    where: str
    module: str
    head_set: str


def check_policies(policies: PolicyBundle) -> list[Problem]:
    bundles = policies.bundles
    where = {module: bundle.file(module) for bundle in bundles for module, _ in bundle.modules}
    builtin = read_catalog(policies.builtin_modules)
    declared = {rule: _Declared("the built-in policies", "", "") for rule in builtin}
    problems: list[Problem] = []
    parsed: dict[str, ParsedModule] = {}
    for bundle in bundles:
        for module, text in bundle.modules:
            try:
                parsed[module] = parse_module(module, text)
            except RegoSyntaxError as exc:
                problems.append(
                    Problem(where[module], exc.line, f"does not compile: {exc.message}")
                )
                continue
            problems += _module_problems(where[module], module, text, parsed[module], declared)
    if problems:
        return problems
    problems += _compile_problems(policies.builtin_modules, bundles, where)
    # Both import this module (its Problem); the examples also the manifests' decoders.
    from .opa_check import opa_problems  # noqa: PLC0415
    from .org_examples import example_problems  # noqa: PLC0415

    problems = problems or opa_problems(policies.modules, where)
    return problems or example_problems(policies, parsed, where)


def refuse_problems(policies: PolicyBundle, *, field: str | None = BUNDLES_SETTING) -> None:
    problems = check_policies(policies)
    if problems:
        raise PolicyRefused(problems, field=field)


def _module_problems(
    file: str, module: str, text: str, parsed: ParsedModule, declared: dict[str, _Declared]
) -> list[Problem]:
    problems = [
        Problem(
            file,
            text.count("\n", 0, match.start()) + 1,
            f"U+{ord(match[0]):04X} breaks a line for people but not for Rego: "
            "end lines with \\n only",
        )
        for match in _OTHER_BREAK.finditer(text)
    ]
    if not _ORG_PACKAGE.fullmatch(parsed.package):
        problems.append(
            Problem(
                file,
                parsed.package_line,
                f"package {parsed.package} is not supportgate.org.<name>: a bundle defines "
                "rules only in `package supportgate.org.<name>` (one lower-case name)",
            )
        )
    problems += [
        Problem(
            file,
            call.line,
            f"{call.name} is not allowed in a bundle (no network, OPA runtime, clock or "
            "randomness; input.evaluated_at is the time): remove the call",
        )
        for call in parsed.calls
        if call.name in FORBIDDEN_CALLS or call.name.startswith(FORBIDDEN_FAMILIES)
    ]
    findings = [rule for rule in parsed.rules if _head_set(rule.name) in FINDING_SETS]
    # The ids this module declares, so that another body of a rule (an OR) may emit one.
    ids = {
        (rule.name, str((rule.metadata or {}).get("custom", {}).get("id")))
        for rule in findings
        if isinstance((rule.metadata or {}).get("custom"), dict)
    }
    for rule in findings:
        where = f"{file}:{rule.line}"
        for message in _finding_problems(rule, ids, module, where, declared):
            problems.append(Problem(file, rule.line, message))
    return problems


def _finding_problems(
    rule: Rule, ids: set[tuple[str, str]], module: str, where: str, declared: dict[str, _Declared]
) -> list[str]:
    head_set = _head_set(rule.name)
    shape = _SHAPE.format(set=head_set)
    if rule.name not in FINDING_SETS or not rule.is_set or rule.fields is None:
        return [f"{rule.name} must be written `{shape}`"]
    found = []
    if sorted(rule.fields) != sorted(FINDING_FIELDS):
        found.append(
            f"a finding is {{rule, message, path}}, this one has {{{', '.join(rule.fields)}}}: "
            f"write `{shape}`"
        )
    emitted = rule.fields.get("rule")
    if emitted is None:
        return [*found, f'its "rule" must be a string constant, its METADATA custom.id: `{shape}`']
    if rule.metadata is None:
        if (head_set, emitted) not in ids:
            found.append(
                f"{head_set} rule without a METADATA block above it: write one (title, "
                "description, custom.id, custom.severity), or, for another body of a rule "
                f"declared in this file (an OR), emit that rule's custom.id ({emitted!r} is none)"
            )
        return found
    found += _metadata_problems(rule.metadata, head_set, where, module, declared)
    custom = rule.metadata.get("custom")
    rule_id = custom.get("id") if isinstance(custom, dict) else None
    if isinstance(rule_id, str) and emitted != rule_id:
        found.append(
            f'the finding\'s "rule" is {emitted!r}, not the METADATA custom.id {rule_id!r} '
            "above it: a rule speaks only for its own id, make them equal"
        )
    return found


def _head_set(name: str) -> str:
    """The first part of a rule head's reference (`deny` of `deny.extra` or `deny["x"]`)."""
    return name.split(".", 1)[0].split("[", 1)[0]


def _metadata_problems(
    annotation: dict[str, Any],
    head_set: str,
    where: str,
    module: str,
    declared: dict[str, _Declared],
) -> list[str]:
    custom = annotation.get("custom")
    custom = custom if isinstance(custom, dict) else {}
    rule_id = custom.get("id")
    found: list[str] = []
    if not isinstance(rule_id, str) or not rule_id.startswith(ID_PREFIX):
        found.append(
            f"METADATA custom.id must be a rule id starting {ID_PREFIX!r}, got {rule_id!r}"
        )
    if isinstance(rule_id, str):
        earlier = declared.get(rule_id)
        if earlier is None:
            declared[rule_id] = _Declared(where, module, head_set)
        elif (earlier.module, earlier.head_set) != (module, head_set):
            found.append(
                f"rule id {rule_id} is already declared by {earlier.where}: choose another id "
                "(the bodies of one rule, an OR, are written in one file)"
            )
    if custom.get("severity") != head_set:
        found.append(
            f"METADATA custom.severity must be {head_set!r} (the set the rule adds to), "
            f"got {custom.get('severity')!r}"
        )
    for key in ("title", "description"):
        if not str(annotation.get(key) or "").strip():
            found.append(f"METADATA has no {key}: add one")
    return found


def _compile_problems(
    builtin: Sequence[tuple[str, str]], bundles: Sequence[OrgBundle], where: dict[str, str]
) -> list[Problem]:
    """Every module beside the built-in ones, in one engine (a rule of the same name in two
    modules of one package must agree)."""
    engine = regorus.Engine()
    for name, text in builtin:
        engine.add_policy(name, text)
    problems: list[Problem] = []
    for bundle in bundles:
        for name, text in bundle.modules:
            try:
                engine.add_policy(name, text)
            except RuntimeError as exc:
                error = syntax_error(exc, name)
                file = where.get(error.module, where[name])
                problems.append(Problem(file, error.line, f"does not compile: {error.message}"))
    return problems
