"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers, as
docs/reports.md describes it. `results` is always an array, so a clean run closes earlier
alerts; texts over GitHub's limits (1024 characters of description) are cut."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from types import MappingProxyType
from typing import Any
from urllib.parse import quote

from supportgate import __version__
from supportgate.manifests.decision import Severity, Violation
from supportgate.manifests.locate import locate
from supportgate.policy.catalog import RuleInfo
from supportgate.reports.model import (
    CheckedManifest,
    Problem,
    Report,
    ordered_violations,
    problem_line,
    relative_path,
    subject,
)
from supportgate.reports.rules import DEFAULT_DOCS_URL, REPORTS_PAGE, rule_help_uri

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
FINGERPRINT_KEY = "supportgate/v1"
SRCROOT = "%SRCROOT%"
INPUT_ERROR_RULE = "check.input-error"
DESCRIPTION_LIMIT = 1024  # GitHub: shortDescription and fullDescription

LEVELS: dict[Severity, str] = {"deny": "error", "warn": "warning", "waived": "note"}
RULE_LEVELS: dict[str, str] = {"deny": "error", "warn": "warning"}
# GitHub shows rules with a security-severity as security alerts: above 9.0 critical, 7.0
# to 8.9 high, 4.0 to 6.9 medium, 0.1 to 3.9 low. A deny rejects (high: by default a pull
# request's code scanning check fails on it); a warn never rejects (low).
SECURITY_SEVERITY: dict[str, str] = {"deny": "8.0", "warn": "3.0"}

_DRIVE = re.compile(r"^[A-Za-z]:/")
_INPUT_ERROR = RuleInfo(
    id=INPUT_ERROR_RULE,
    severity="deny",
    title="Input supportgate check could not judge",
    description=(
        "A file that cannot be read, holds no manifest, holds one that does not decode or "
        "validate, or repeats a manifest of another file. supportgate check exits 2 and "
        "judges none of that file's manifests."
    ),
    remediation=(
        "Fix the field the message names (the error gives its JSON path), or remove the file "
        "from the check; then run the check again."
    ),
)


@dataclass(frozen=True, slots=True)
class SarifOptions:
    rules: Mapping[str, RuleInfo] = field(default_factory=lambda: MappingProxyType({}))
    root: str | None = None  # `--sarif-root`, absolute; None keeps the paths as given
    cwd: str | None = None  # the absolute directory relative sources are relative to
    docs_url: str = DEFAULT_DOCS_URL


def render_sarif(report: Report, options: SarifOptions | None = None) -> str:
    options = options or SarifOptions()
    found = [
        (result, violation)
        for result in report.results
        for violation in ordered_violations(result.decision)
    ]
    rules = _rules(options.rules, [violation for _, violation in found])
    index = {rule.id: position for position, rule in enumerate(rules)}
    results = [
        _result(result, violation, index[violation.rule], options) for result, violation in found
    ]
    results += [
        _problem_result(problem, index[INPUT_ERROR_RULE], options)
        for problem in report.problems
        if problem.source is not None
    ]
    invocation: dict[str, Any] = {
        "executionSuccessful": not report.problems,
        "exitCode": report.exit_code,
    }
    if report.problems:
        invocation["toolExecutionNotifications"] = [
            _notification(problem, options) for problem in report.problems
        ]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "supportgate",
                "version": __version__,
                "informationUri": options.docs_url + REPORTS_PAGE,
                "rules": [_descriptor(rule, options.docs_url) for rule in rules],
            }
        },
        "invocations": [invocation],
        "originalUriBaseIds": {SRCROOT: _srcroot(options)},
        "results": results,
    }
    log = {"$schema": SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}
    return json.dumps(log, indent=2) + "\n"


def artifact_location(source: str, options: SarifOptions) -> dict[str, str]:
    """Where `source` is: relative to the root when it lies inside it, else absolute."""
    if options.root is None:
        uri, relative = artifact_uri(source)
        return {"uri": uri, "uriBaseId": SRCROOT} if relative else {"uri": uri}
    absolute = os.path.normpath(os.path.join(options.cwd or options.root, source))
    try:
        inside = os.path.relpath(absolute, options.root)
    except ValueError:  # another drive: no relative path exists
        inside = os.pardir
    if inside == os.pardir or inside.startswith(os.pardir + os.sep):
        return {"uri": PurePath(absolute).as_uri()}
    return {"uri": quote(PurePath(inside).as_posix(), safe="/"), "uriBaseId": SRCROOT}


def artifact_uri(source: str) -> tuple[str, bool]:
    """`source` as a URI reference with forward slashes; `True` when it is relative."""
    path = source.replace("\\", "/")
    if path.startswith("/"):
        return "file://" + quote(path, safe="/"), False
    if _DRIVE.match(path):
        return "file:///" + path[:2] + quote(path[2:], safe="/"), False
    return quote(relative_path(path), safe="/"), True


def fingerprint(result: CheckedManifest, violation: Violation) -> str:
    """Stable across line moves and re-runs: sha256 of kind, name, rule and path."""
    manifest = result.decision.manifest
    return _digest(manifest.kind, manifest.name, violation.rule, violation.path)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _rules(catalog: Mapping[str, RuleInfo], violations: Sequence[Violation]) -> list[RuleInfo]:
    """The catalogue's rules, the input-error rule, then rules only the decisions name."""
    unknown: dict[str, str] = {}
    for violation in violations:
        if violation.rule not in catalog:
            # a waived result is a deny that a waiver covers; the rule itself denies
            denies = violation.severity != "warn" or unknown.get(violation.rule) == "deny"
            unknown[violation.rule] = "deny" if denies else "warn"
    extra = [
        RuleInfo(
            id=rule_id,
            severity=severity,
            title=f"supportgate rule {rule_id}",
            description=f"The rule {rule_id}, which the local policy catalogue does not hold.",
            remediation="See the message of each result, and the policies that define the rule.",
        )
        for rule_id, severity in sorted(unknown.items())
    ]
    return [*(catalog[rule_id] for rule_id in sorted(catalog)), _INPUT_ERROR, *extra]


def _descriptor(rule: RuleInfo, docs_url: str) -> dict[str, Any]:
    help_uri = (
        docs_url + REPORTS_PAGE + "#input-errors"
        if rule is _INPUT_ERROR
        else rule_help_uri(docs_url, rule.id)
    )
    severity = rule.severity if rule.severity in RULE_LEVELS else "warn"
    return {
        "id": rule.id,
        "shortDescription": {"text": _cut(rule.title or rule.id)},
        "fullDescription": {"text": _cut(rule.description or rule.title or rule.id)},
        "help": {
            "text": f"{rule.description}\n\nHow to fix: {rule.remediation}",
            "markdown": (
                f"**{rule.title}** (`{rule.id}`, {severity})\n\n{rule.description}\n\n"
                f"**How to fix:** {rule.remediation}\n\n[Documentation]({help_uri})"
            ),
        },
        "helpUri": help_uri,
        "defaultConfiguration": {"level": RULE_LEVELS[severity]},
        "properties": {
            "tags": ["supportgate", "compliance", "security", rule.id.split(".", 1)[0]],
            "precision": "very-high",
            "problem.severity": RULE_LEVELS[severity],
            "security-severity": SECURITY_SEVERITY[severity],
        },
    }


def _cut(text: str) -> str:
    return text if len(text) <= DESCRIPTION_LIMIT else text[: DESCRIPTION_LIMIT - 1] + "…"


def _srcroot(options: SarifOptions) -> dict[str, Any]:
    if options.root is None:
        return {"description": {"text": "The directory supportgate check ran in."}}
    return {
        "uri": PurePath(options.root).as_uri().rstrip("/") + "/",
        "description": {"text": "The --sarif-root of supportgate check."},
    }


def _region(text: str | None, line: int | None, column: int | None = None) -> dict[str, int]:
    """From `column` (else the line's first non-blank character) to the end of the line:
    GitHub wants columns too."""
    number = line or 1
    lines = (text or "").splitlines()
    content = lines[number - 1] if number <= len(lines) else ""
    start = len(content) - len(content.lstrip()) + 1 if content.strip() else 1
    start = column or start
    return {
        "startLine": number,
        "startColumn": start,
        "endLine": number,
        "endColumn": max(len(content) + 1, start),
    }


def _physical(
    source: str,
    text: str | None,
    line: int | None,
    options: SarifOptions,
    column: int | None = None,
) -> Any:
    return {
        "artifactLocation": artifact_location(source, options),
        "region": _region(text, line, column),
    }


def _result(
    result: CheckedManifest, violation: Violation, index: int, options: SarifOptions
) -> dict[str, Any]:
    decision = result.decision
    line = locate(result.text, violation.path, result.document_index)
    message = violation.message if not violation.path else f"{violation.path}: {violation.message}"
    entry: dict[str, Any] = {
        "ruleId": violation.rule,
        "ruleIndex": index,
        "level": LEVELS[violation.severity],
        "message": {"text": message},
        "locations": [
            {
                "physicalLocation": _physical(result.source, result.text, line, options),
                "logicalLocations": [
                    {"fullyQualifiedName": f"{subject(decision)}:{violation.path}"}
                ],
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(result, violation)},
        "properties": {"verdict": decision.verdict, "severity": violation.severity},
    }
    if violation.severity == "waived":
        justification = f"waiver {violation.waiver_id}" if violation.waiver_id else "waived"
        entry["suppressions"] = [
            {"kind": "external", "status": "accepted", "justification": justification}
        ]
        if violation.waiver_id:
            entry["properties"]["waiverId"] = violation.waiver_id
    return entry


def _problem_location(problem: Problem, options: SarifOptions) -> dict[str, Any]:
    location: dict[str, Any] = {}
    if problem.source is not None:
        location["physicalLocation"] = _physical(
            problem.source, problem.text, problem_line(problem), options, problem.column
        )
    if problem.field is not None:
        location["logicalLocations"] = [{"fullyQualifiedName": problem.field}]
    return location


def _problem_result(problem: Problem, index: int, options: SarifOptions) -> dict[str, Any]:
    return {
        "ruleId": INPUT_ERROR_RULE,
        "ruleIndex": index,
        "level": "error",
        "message": {"text": problem.message},
        "locations": [_problem_location(problem, options)],
        "partialFingerprints": {
            FINGERPRINT_KEY: _digest(INPUT_ERROR_RULE, problem.source or "", problem.field or "")
        },
    }


def _notification(problem: Problem, options: SarifOptions) -> dict[str, Any]:
    notification: dict[str, Any] = {"level": "error", "message": {"text": problem.message}}
    location = _problem_location(problem, options)
    if location:
        notification["locations"] = [location]
    return notification
