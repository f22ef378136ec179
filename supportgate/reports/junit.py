"""`--format junit`: JUnit XML, one testsuite per file and one testcase per manifest.

A testcase fails when its manifest fails the gate; the failure lists the violations.
Warnings, waived denies and recommendations go to the testcase's `<system-out>`.
ElementTree escapes markup; characters XML 1.0 cannot carry at all are replaced first.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence

from supportgate.manifests.decision import Decision, Violation
from supportgate.reports.model import (
    CheckedManifest,
    FailOn,
    gate_failed,
    ordered_violations,
    subject,
)

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def render_junit(results: Sequence[CheckedManifest], fail_on: FailOn) -> str:
    by_source: dict[str, list[CheckedManifest]] = {}
    for result in results:
        by_source.setdefault(result.source, []).append(result)

    root = ET.Element("testsuites", name="supportgate")
    total = failures = 0
    for source, group in by_source.items():
        suite = ET.SubElement(root, "testsuite", name=_xml(source))
        suite_failures = 0
        for result in group:
            failed = gate_failed(result.decision, fail_on)
            suite_failures += int(failed)
            _testcase(suite, result.decision, failed=failed, fail_on=fail_on)
        _counts(suite, tests=len(group), failures=suite_failures)
        total += len(group)
        failures += suite_failures
    _counts(root, tests=total, failures=failures)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'


def _counts(element: ET.Element, *, tests: int, failures: int) -> None:
    element.set("tests", str(tests))
    element.set("failures", str(failures))
    element.set("errors", "0")
    element.set("skipped", "0")


def _testcase(suite: ET.Element, decision: Decision, *, failed: bool, fail_on: FailOn) -> None:
    case = ET.SubElement(
        suite, "testcase", classname=decision.manifest.kind, name=_xml(decision.manifest.name)
    )
    violations = ordered_violations(decision)
    if failed:
        severities = Counter(v.severity for v in violations)
        counted = ", ".join(
            f"{severities[s]} {s}" for s in ("deny", "waived", "warn") if severities[s]
        )
        message = f"{subject(decision)} is {decision.verdict} (fail on {fail_on})"
        if counted:
            message = f"{message}: {counted}"
        failure = ET.SubElement(case, "failure", message=_xml(message), type=decision.verdict)
        failure.text = _xml("\n".join(_line(v) for v in violations))
    notes = [_line(v) for v in violations if v.severity != "deny"]
    notes += [f"recommendation: {text}" for text in decision.recommendations]
    if notes:
        ET.SubElement(case, "system-out").text = _xml("\n".join(notes))


def _line(violation: Violation) -> str:
    where = f" {violation.path}" if violation.path else ""
    waiver = f" (waiver {violation.waiver_id})" if violation.waiver_id else ""
    return f"{violation.severity} {violation.rule}{where}: {violation.message}{waiver}"


def _xml(value: str) -> str:
    """`value` without the characters XML 1.0 forbids (ElementTree would write them raw)."""
    return _NOT_XML.sub("\ufffd", value)
