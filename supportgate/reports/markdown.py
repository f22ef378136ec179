"""`--format markdown`: the report as GitHub-flavoured Markdown, for a CI job's summary
(`$GITHUB_STEP_SUMMARY`) or a merge request comment (docs/reports.md)."""

from __future__ import annotations

from supportgate.reports.model import (
    Report,
    gate_failed,
    ordered_violations,
    printable,
    problem_line,
    subject,
    summary_line,
)

_MARKS = {"passed": "✅", "failed": "❌", "error": "⚠️"}


def render_markdown(report: Report) -> str:
    lines = [
        f"## {_MARKS[report.status]} supportgate: gate {report.status}",
        "",
        summary_line(report),
        "",
    ]
    if report.problems:
        lines += ["### Input errors", "", "| File | Line | Field | Message |", "|---|---|---|---|"]
        lines += [
            f"| {_cell(p.source or '')} | {problem_line(p) or ''} | {_code(p.field)} | "
            f"{_cell(p.message)} |"
            for p in report.problems
        ]
        lines.append("")
    if report.results:
        lines += ["| Gate | Verdict | Manifest | File |", "|---|---|---|---|"]
        lines += [
            f"| {'FAIL' if gate_failed(r.decision, report.fail_on) else 'PASS'} | "
            f"{r.decision.verdict} | {_code(subject(r.decision))} | {_cell(r.source)} |"
            for r in report.results
        ]
        lines.append("")
    for result in report.results:
        violations = ordered_violations(result.decision)
        if not violations:
            continue
        lines += [
            f"### {subject(result.decision)}: {result.decision.verdict}",
            "",
            "| Severity | Rule | Message | Path |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {v.severity} | {_code(v.rule)} | {_cell(v.message)} | {_code(v.path)} |"
            for v in violations
        ]
        lines.append("")
    if report.skipped:
        lines += ["Passed over (not supportgate/v1): " + ", ".join(map(_cell, report.skipped)), ""]
    return "\n".join(lines)


def _cell(text: str) -> str:  # one line, `|` escaped: a table cell
    return " ".join(printable(text).split()).replace("|", "\\|")


def _code(text: str | None) -> str:
    return "`" + _cell(text).replace("`", "'") + "`" if text else ""
