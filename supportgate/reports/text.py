from __future__ import annotations

from supportgate.manifests.decision import Violation
from supportgate.reports.model import (
    Report,
    gate_failed,
    ordered_violations,
    printable,
    subject,
    summary_line,
)

_INDENT = "  "
_SEVERITY_WIDTH = len("waived")


def render_text(report: Report) -> str:
    results, fail_on = report.results, report.fail_on
    source_width = max((len(printable(r.source)) for r in results), default=0)
    subject_width = max((len(subject(r.decision)) for r in results), default=0)
    rule_width = max((len(v.rule) for r in results for v in r.decision.violations), default=0)

    lines = [f"ERROR  {printable(problem.located())}" for problem in report.problems]
    lines += [
        f"SKIP  {printable(skipped)}: not a supportgate/v1 document" for skipped in report.skipped
    ]
    for result in results:
        decision = result.decision
        status = "FAIL" if gate_failed(decision, fail_on) else "PASS"
        lines.append(
            f"{status}  {printable(result.source):<{source_width}}  "
            f"{subject(decision):<{subject_width}}  verdict={decision.verdict}"
        )
        for violation in ordered_violations(decision):
            lines.extend(_violation_lines(violation, rule_width))
    if lines:
        lines.append("")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def _violation_lines(violation: Violation, rule_width: int) -> list[str]:
    rule = printable(violation.rule)
    head = f"{_INDENT}{violation.severity:<{_SEVERITY_WIDTH}}  {rule:<{rule_width}}  "
    body = violation.message.strip()
    if violation.path:
        body = f"{violation.path}: {body}"
    if violation.waiver_id:
        body = f"{body} (waiver {violation.waiver_id})"
    first, *rest = printable(body).splitlines() or [""]
    # a multi-line message continues under its own first line, keeping the block intact
    return [head + first, *(" " * len(head) + line for line in rest)]
