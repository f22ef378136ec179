"""The fleet at a time as an OSCAL 1.2 Assessment Results document: plain data, not trestle's
models, with version 5 UUIDs of what they name (docs/reports.md#oscal says what maps to what)."""

from __future__ import annotations

import hashlib
import re
import uuid
from datetime import datetime
from typing import Any

import msgspec

from supportgate.fleet.query import FleetAt, FleetManifest
from supportgate.manifests.decision import Severity, Violation

OSCAL_VERSION = "1.2.1"
PROPS_NS = "https://github.com/supportgate/supportgate/blob/main/docs/reports.md#oscal"
"""The namespace of supportgate's own props: the page that says what each means."""

_UUIDS = uuid.uuid5(uuid.NAMESPACE_URL, PROPS_NS)
_NOT_TOKEN = re.compile(r"[^A-Za-z0-9_.\-]")
_RANK: dict[Severity, int] = {"deny": 0, "waived": 1, "warn": 2}
_REASONS: dict[Severity, str] = {"deny": "fail", "waived": "other", "warn": "other"}


Part = dict[str, Any]
"""A part of the document, under OSCAL's JSON names; `_part` leaves out the absent optional
ones (OSCAL refuses an empty list where it allows none)."""


def assessment_results(fleet: FleetAt, *, policy_revision: str) -> bytes:
    """`policy_revision`: the one in force (the fleet's, or before any decision the engine's).
    Compact: indented, a fleet of 10,000 manifests took 50 MB instead of 30."""
    return msgspec.json.encode(_document(fleet, policy_revision)) + b"\n"


def _document(fleet: FleetAt, revision: str) -> Part:
    manifests = sorted(fleet.manifests, key=lambda m: (m.kind, m.name))
    at = _time(fleet.as_of)
    basis = _basis_props(fleet, revision)
    matrix = fleet.matrix_version or "none yet"
    identity = _digest(fleet, revision, manifests)
    plan = {
        "uuid": _uuid("basis", identity),
        "title": "supportgate assessment basis",
        "description": (
            f"The tracked manifests as they stood at {at}, each judged by supportgate's "
            f"policies at revision {revision} against support matrix version "
            f"{matrix} (the versions in force at that time)."
        ),
        "props": basis,
    }
    observations = [_observation(m) for m in manifests]
    findings = [finding for m in manifests for finding in _findings(m)]
    result = _part(
        uuid=_uuid("result", identity),
        title=f"Fleet at {at}",
        description=(
            f"{_count(len(manifests), 'tracked manifest')} at {at}: one observation each, and "
            f"one finding per rule a manifest's decision violates ({len(findings)} in all)."
        ),
        start=fleet.as_of,
        end=fleet.as_of,
        reviewed_controls={
            "description": (
                f"Every rule of supportgate policy revision {revision}, "
                f"with support matrix version {matrix}."
            ),
            "control-selections": [
                {
                    "description": "every rule the policies define (docs/rules.md)",
                    "include-all": {},
                }
            ],
        },
        props=basis,
        local_definitions=(
            {"inventory-items": [_inventory_item(m) for m in manifests]} if manifests else None
        ),
        observations=observations or None,
        findings=findings or None,
    )
    return {
        "assessment-results": {
            "uuid": _uuid("assessment-results", identity),
            "metadata": {
                "title": f"supportgate fleet assessment at {at}",
                "last-modified": fleet.as_of,
                "version": at,
                "oscal-version": OSCAL_VERSION,
            },
            "import-ap": {
                "href": f"#{plan['uuid']}",
                "remarks": "The basis of the assessment: the policy revision and support matrix "
                "version in force (back-matter).",
            },
            "results": [result],
            "back-matter": {"resources": [plan]},
        }
    }


def _basis_props(fleet: FleetAt, revision: str) -> list[Part]:
    props = [_prop("as-of", _time(fleet.as_of))]
    if fleet.matrix_version is not None:
        props.append(_prop("matrix-version", fleet.matrix_version))
    props.append(_prop("policy-revision", revision))
    return props


def _inventory_item(manifest: FleetManifest) -> Part:
    props = [_prop("kind", manifest.kind), _prop("name", manifest.name)]
    if manifest.owner:
        props.append(_prop("owner", manifest.owner))
    return {
        "uuid": _subject_uuid(manifest),
        "description": f"The {manifest.kind} {manifest.name!r}, tracked by supportgate.",
        "props": props,
    }


def _observation(manifest: FleetManifest) -> Part:
    decision = manifest.decision
    leaf = decision.leaf_index
    log = f", entry {leaf} of the verifiable log" if leaf is not None else ""
    evidence = _part(
        description=f"supportgate decision {decision.id}{log}",
        href=f"/v1/audit/entries/{leaf}" if leaf is not None else None,
    )
    return {
        "uuid": _uuid("observation", manifest.kind, manifest.name, decision.id),
        "title": _line(f"{manifest.kind}/{manifest.name}: {decision.verdict}"),
        "description": (
            f"{manifest.kind}/{manifest.name} is {decision.verdict}: decision "
            f"{decision.id}, made at {_time(decision.evaluated_at)} under support matrix "
            f"version {decision.matrix_version} and policy revision {decision.policy_revision}; "
            f"{_rule_counts(decision.violations)}."
        ),
        "methods": ["TEST"],
        "subjects": [
            {
                "subject-uuid": _subject_uuid(manifest),
                "type": "inventory-item",
                "title": _line(f"{manifest.kind}/{manifest.name}"),
            }
        ],
        "relevant-evidence": [evidence],
        "collected": decision.evaluated_at,
        "props": [
            _prop("verdict", decision.verdict),
            _prop("decision-id", decision.id),
            _prop("matrix-version", decision.matrix_version),
            _prop("policy-revision", decision.policy_revision),
        ],
    }


def _findings(manifest: FleetManifest) -> list[Part]:
    by_rule: dict[str, list[Violation]] = {}
    for violation in sorted(manifest.decision.violations, key=Violation.sort_key):
        by_rule.setdefault(violation.rule, []).append(violation)
    observation = _uuid("observation", manifest.kind, manifest.name, manifest.decision.id)
    return [
        _finding(manifest, rule, violations, observation)
        for rule, violations in sorted(by_rule.items())
    ]


def _finding(
    manifest: FleetManifest, rule: str, violations: list[Violation], observation: str
) -> Part:
    # One rule has one severity in a decision; were it ever mixed, the worst one speaks.
    severity = min((v.severity for v in violations), key=_RANK.__getitem__)
    waivers = sorted({v.waiver_id for v in violations if v.waiver_id})
    lines = [f"- {v.severity}{f' at {v.path}' if v.path else ''}: {v.message}" for v in violations]
    props = [_prop("rule", rule), _prop("severity", severity)]
    props += [_prop("waiver-id", waiver) for waiver in waivers]
    remarks = f"waived by {', '.join(waivers)}" if severity == "waived" and waivers else None
    subject = f"{manifest.kind}/{manifest.name}"
    return {
        "uuid": _uuid("finding", manifest.kind, manifest.name, manifest.decision.id, rule),
        "title": _line(f"{rule} {_FINDING_TITLES[severity]} {subject}"),
        "description": f"{subject} {_FINDING_VERBS[severity].format(rule=rule)}:\n"
        + "\n".join(lines),
        "target": {
            "type": "objective-id",
            "target-id": _token(rule),
            "status": _part(state="not-satisfied", reason=_REASONS[severity], remarks=remarks),
        },
        "related-observations": [{"observation-uuid": observation}],
        "props": props,
    }


def _subject_uuid(manifest: FleetManifest) -> str:
    return _uuid("manifest", manifest.kind, manifest.name)


def _uuid(*parts: str) -> str:
    # A NUL cannot be in any part (the API refuses it), so the parts cannot run together.
    return str(uuid.uuid5(_UUIDS, "\x00".join(parts)))


def _digest(fleet: FleetAt, revision: str, manifests: list[FleetManifest]) -> str:
    """What the document's own UUIDs derive from: the time, the basis and each decision."""
    basis = [_time(fleet.as_of), fleet.matrix_version or "", revision]
    decisions = [f"{m.kind}/{m.name}/{m.decision.id}" for m in manifests]
    return hashlib.sha256("\x00".join(basis + decisions).encode()).hexdigest()


def _time(at: datetime) -> str:
    return msgspec.json.encode(at).decode().strip('"')


_FINDING_TITLES: dict[Severity, str] = {
    "deny": "violated by",
    "waived": "violated (waived) by",
    "warn": "warning on",
}
_FINDING_VERBS: dict[Severity, str] = {
    "deny": "violates {rule}, which rejects it",
    "waived": "violates {rule}, a deny a waiver covers (it does not reject)",
    "warn": "draws the warning {rule} (a warning never rejects)",
}


def _rule_counts(violations: tuple[Violation, ...]) -> str:
    """`1 rule violated, 1 waived, 2 warnings`: rules counted once, by their worst severity."""
    worst: dict[str, Severity] = {}
    for v in violations:
        if v.rule not in worst or _RANK[v.severity] < _RANK[worst[v.rule]]:
            worst[v.rule] = v.severity
    counts = {severity: list(worst.values()).count(severity) for severity in _RANK}
    violated = (
        _count(counts["deny"], "rule") + " violated" if counts["deny"] else "no rule violated"
    )
    parts = [violated]
    if counts["waived"]:
        parts.append(f"{_count(counts['waived'], 'rule')} waived")
    if counts["warn"]:
        parts.append(_count(counts["warn"], "warning"))
    return ", ".join(parts)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _line(text: str) -> str:
    """A single-line OSCAL string (titles, prop values): whitespace runs become one space."""
    return " ".join(text.split()) or "-"


def _prop(name: str, value: str) -> Part:
    return {"name": name, "value": _line(value), "ns": PROPS_NS}


def _part(**fields: object) -> Part:
    """`reviewed_controls` is OSCAL's `reviewed-controls`; None is left out."""
    return {key.replace("_", "-"): value for key, value in fields.items() if value is not None}


def _token(rule: str) -> str:
    """A letter or `_` first; letters, digits, `_.-` (the built-in ids are tokens already).
    The `rule` prop keeps the id as it is."""
    token = _NOT_TOKEN.sub("_", rule)
    return token if token[:1].isalpha() or token[:1] == "_" else f"_{token}"
