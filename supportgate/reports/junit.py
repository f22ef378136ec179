"""`--format junit`: JUnit XML valid against Jenkins' junit-10.xsd, for GitLab and Jenkins.
docs/reports.md says why an experimental manifest that passes the gate is `<skipped>`, and
which attributes junit-10.xsd allows where; nothing else is written."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter

from supportgate.manifests.decision import Decision, Violation
from supportgate.reports.model import (
    CheckedManifest,
    FailOn,
    Problem,
    Report,
    gate_failed,
    ordered_violations,
    subject,
)

# What XML 1.0 cannot carry, named as itself: the complement of its Char production compiles
# in ~6 ms at import (the astral range), which every `supportgate check` paid; this in ~1 ms.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
NO_FILE_SUITE = "supportgate"


def render_junit(report: Report) -> str:
    # one suite per file (None: the problems that concern no file), problems first
    suites: dict[str | None, tuple[list[Problem], list[CheckedManifest]]] = {}
    for problem in report.problems:
        suites.setdefault(problem.source, ([], []))[0].append(problem)
    for result in report.results:
        suites.setdefault(result.source, ([], []))[1].append(result)

    root = ET.Element("testsuites", name="supportgate")
    total: Counter[str] = Counter()
    for source, (problems, results) in suites.items():
        suite = ET.SubElement(root, "testsuite", name=_xml(source or NO_FILE_SUITE))
        if source is not None:
            suite.set("file", _xml(source))
        counts = Counter(tests=len(problems), errors=len(problems))
        for problem in problems:
            _error_case(suite, problem)
        for result in results:
            counts.update(_testcase(suite, result, report.fail_on))
        _set_counts(suite, counts, sum(result.seconds for result in results))
        suite.set("skipped", str(counts["skipped"]))
        total.update(counts)
    _set_counts(root, total, sum(result.seconds for result in report.results))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'


def _set_counts(element: ET.Element, counts: Counter[str], seconds: float) -> None:
    element.set("tests", str(counts["tests"]))
    element.set("failures", str(counts["failures"]))
    element.set("errors", str(counts["errors"]))
    element.set("time", _seconds(seconds))


def _seconds(value: float) -> str:
    """Seconds with three decimals, the form junit-10.xsd's SUREFIRE_TIME accepts."""
    return f"{max(value, 0.0):.3f}"


def _error_case(suite: ET.Element, problem: Problem) -> None:
    name = problem.source if problem.source is not None else "supportgate check"
    case = ET.SubElement(suite, "testcase", classname="input", name=_xml(name), time=_seconds(0))
    message = _xml(problem.located())
    error = ET.SubElement(case, "error", message=message, type="input-error")
    error.text = message


def _testcase(suite: ET.Element, result: CheckedManifest, fail_on: FailOn) -> Counter[str]:
    decision = result.decision
    case = ET.SubElement(
        suite,
        "testcase",
        classname=decision.manifest.kind,
        name=_xml(decision.manifest.name),
        time=_seconds(result.seconds),
    )
    counts = Counter(tests=1)
    violations = ordered_violations(decision)
    if gate_failed(decision, fail_on):
        failure = ET.SubElement(
            case,
            "failure",
            message=_xml(_failure_message(decision, fail_on)),
            type=decision.verdict,
        )
        failure.text = _xml("\n".join(_line(v) for v in violations))
        counts["failures"] = 1
    elif decision.verdict == "experimental":
        reason = _experimental_reason(decision, fail_on)
        ET.SubElement(case, "skipped", message=_xml(reason), type="experimental").text = _xml(
            reason
        )
        counts["skipped"] = 1
    notes = [_line(v) for v in violations if v.severity != "deny"]
    notes += [f"recommendation: {text}" for text in decision.recommendations]
    if notes:
        ET.SubElement(case, "system-out").text = _xml("\n".join(notes))
    return counts


def _failure_message(decision: Decision, fail_on: FailOn) -> str:
    severities = Counter(v.severity for v in decision.violations)
    counted = ", ".join(f"{severities[s]} {s}" for s in ("deny", "waived", "warn") if severities[s])
    message = f"{subject(decision)} is {decision.verdict} (fail on {fail_on})"
    return f"{message}: {counted}" if counted else message


def _experimental_reason(decision: Decision, fail_on: FailOn) -> str:
    warnings = ", ".join(sorted({v.rule for v in decision.violations if v.severity == "warn"}))
    why = f" ({warnings})" if warnings else ""
    return (
        f"{subject(decision)} is experimental{why}: not officially supported; "
        f"the gate passes it (fail on {fail_on}), --fail-on experimental would fail it"
    )


def _line(violation: Violation) -> str:
    where = f" {violation.path}" if violation.path else ""
    waiver = f" (waiver {violation.waiver_id})" if violation.waiver_id else ""
    return f"{violation.severity} {violation.rule}{where}: {violation.message}{waiver}"


def _xml(value: str) -> str:
    """`value` without the characters XML 1.0 forbids (ElementTree would write them raw)."""
    return _NOT_XML.sub("\ufffd", value)
