"""`--format github`: GitHub Actions workflow commands, one annotation per violation
(docs/reports.md). Escaping follows @actions/core: in data `%`, CR and LF; in property values
also `:` and `,`.
"""

from __future__ import annotations

from supportgate.manifests.decision import Severity
from supportgate.manifests.locate import locate
from supportgate.reports.model import (
    Report,
    ordered_violations,
    printable,
    problem_line,
    relative_path,
    subject,
    summary_line,
)

COMMANDS: dict[Severity, str] = {"deny": "error", "warn": "warning", "waived": "notice"}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(printable(message))}"


def render_github(report: Report) -> str:
    lines = [
        command(
            "error",
            problem.message,
            file=None if problem.source is None else printable(relative_path(problem.source)),
            line=problem_line(problem),
            col=problem.column,
            title="supportgate: input error",
        )
        for problem in report.problems
    ]
    for result in report.results:
        file = relative_path(result.source)
        for violation in ordered_violations(result.decision):
            where = f" {violation.path}" if violation.path else ""
            waiver = f" (waiver {violation.waiver_id})" if violation.waiver_id else ""
            message = f"{subject(result.decision)}{where}: {violation.message}{waiver}"
            lines.append(
                command(
                    COMMANDS[violation.severity],
                    message,
                    file=printable(file),
                    line=locate(result.text, violation.path, result.document_index),
                    title=printable(violation.rule),
                )
            )
    passed = report.status == "passed"
    lines.append(
        command("notice" if passed else "error", summary_line(report), title="supportgate")
    )
    return "\n".join(lines) + "\n"
