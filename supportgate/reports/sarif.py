"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run; `tool.driver.rules` holds one reportingDescriptor per rule id seen (sorted, no
duplicates, always an array) and every result points at its rule by `ruleId` and the
matching `ruleIndex`. `results` is always an array, empty when nothing fired, so a clean
run closes earlier alerts.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any
from urllib.parse import quote

from supportgate import __version__
from supportgate.manifests.decision import Severity, Violation
from supportgate.reports.locate import locate
from supportgate.reports.model import (
    CheckedManifest,
    FailOn,
    ordered_violations,
    subject,
)

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
FINGERPRINT_KEY = "supportgate/v1"

LEVELS: dict[Severity, str] = {"deny": "error", "warn": "warning", "waived": "note"}
_LEVEL_RANK: dict[str, int] = {"error": 0, "warning": 1, "note": 2}

_DRIVE = re.compile(r"^[A-Za-z]:/")


def render_sarif(
    results: Sequence[CheckedManifest],
    fail_on: FailOn,
    rule_titles: Mapping[str, str] = MappingProxyType({}),
) -> str:
    """SARIF 2.1.0; `rule_titles` maps rule ids to titles (the policies' METADATA)."""
    del fail_on  # SARIF reports findings; the gate is the exit code's business
    found = [
        (result, violation)
        for result in results
        for violation in ordered_violations(result.decision)
    ]

    rule_ids = sorted({violation.rule for _, violation in found})
    rule_index = {rule_id: index for index, rule_id in enumerate(rule_ids)}
    default_level: dict[str, str] = {}
    for _, violation in found:
        level = LEVELS[violation.severity]
        current = default_level.get(violation.rule)
        if current is None or _LEVEL_RANK[level] < _LEVEL_RANK[current]:
            default_level[violation.rule] = level

    log = {
        "$schema": SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "supportgate",
                        "version": __version__,
                        "rules": [
                            _rule(rule_id, default_level[rule_id], rule_titles)
                            for rule_id in rule_ids
                        ],
                    }
                },
                "results": [
                    _result(result, violation, rule_index[violation.rule])
                    for result, violation in found
                ],
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"


def artifact_uri(source: str) -> tuple[str, bool]:
    """`source` as a URI reference with forward slashes; `True` when it is relative."""
    path = source.replace("\\", "/")
    if path.startswith("/"):
        return "file://" + quote(path, safe="/"), False
    if _DRIVE.match(path):
        return "file:///" + path[:2] + quote(path[2:], safe="/"), False
    while path.startswith("./"):
        path = path[2:]
    return quote(path, safe="/"), True


def fingerprint(result: CheckedManifest, violation: Violation) -> str:
    """Stable across line moves and re-runs: sha256 of kind, name, rule and path."""
    manifest = result.decision.manifest
    key = "\0".join((manifest.kind, manifest.name, violation.rule, violation.path))
    return hashlib.sha256(key.encode()).hexdigest()


def _rule(rule_id: str, level: str, rule_titles: Mapping[str, str]) -> dict[str, Any]:
    return {
        "id": rule_id,
        "shortDescription": {"text": rule_titles.get(rule_id) or f"supportgate rule {rule_id}"},
        "defaultConfiguration": {"level": level},
    }


def _result(result: CheckedManifest, violation: Violation, index: int) -> dict[str, Any]:
    decision = result.decision
    uri, relative = artifact_uri(result.source)
    artifact: dict[str, Any] = {"uri": uri}
    if relative:
        artifact["uriBaseId"] = "%SRCROOT%"
    line = locate(result.text, violation.path, result.document_index) or 1
    message = violation.message if not violation.path else f"{violation.path}: {violation.message}"
    entry: dict[str, Any] = {
        "ruleId": violation.rule,
        "ruleIndex": index,
        "level": LEVELS[violation.severity],
        "message": {"text": message},
        "locations": [
            {
                "physicalLocation": {"artifactLocation": artifact, "region": {"startLine": line}},
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
