"""What every report format shares: the checked manifests, the problems, the gate, the summary.

The gate has three outcomes, which are also `supportgate check`'s exit codes: `passed` (0),
`failed` (1: a manifest fails the gate) and `error` (2: a problem kept check from judging
some input). An error outranks a failure: a report with problems never says "passed".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from supportgate.manifests.decision import Decision, Severity, Violation
from supportgate.manifests.locate import locate

FailOn = Literal["rejected", "experimental"]
FAIL_ON: tuple[FailOn, ...] = ("rejected", "experimental")
GateStatus = Literal["passed", "failed", "error"]
EXIT_CODES: dict[GateStatus, int] = {"passed": 0, "failed": 1, "error": 2}

_SEVERITY_RANK: dict[Severity, int] = {"deny": 0, "waived": 1, "warn": 2}


@dataclass(frozen=True, slots=True)
class CheckedManifest:
    """One manifest that `supportgate check` evaluated.

    `source` is the file path as the user gave it; `text` is that file's text (used only to
    find line numbers, `None` when unknown); `document_index` says which YAML document of a
    multi-document file the manifest is; `seconds` is the time its evaluation took.
    """

    source: str
    decision: Decision
    text: str | None
    document_index: int = 0
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Problem:
    """Something that kept `check` from judging an input (exit 2).

    A file that cannot be read, holds no manifest or no valid one, repeats a manifest; an
    option with a bad value; an engine or server that gave no decision. `message` is the
    whole sentence for people (it names the file and field itself). `source` is the file
    concerned (`None` for an option or the engine); `field` the JSON path of the failing
    field in it (`$.metadata.name`; `$` for the whole document) or the option (`--at`),
    `None` when nothing narrower applies. `line` and `column` (1-based) say where, when the
    decoder knew; else `text` and `document_index` locate the field's line, as for
    CheckedManifest (`document_index` is `None` when the document is unknown).
    """

    message: str
    source: str | None = None
    field: str | None = None
    text: str | None = None
    document_index: int | None = None
    line: int | None = None
    column: int | None = None

    def located(self) -> str:
        """The message, with its line and column when they are known and it does not say them."""
        line = problem_line(self)
        if line is None or f"line {line}" in self.message:
            return self.message
        column = "" if self.column is None else f", column {self.column}"
        return f"{self.message} (line {line}{column})"


@dataclass(frozen=True, slots=True)
class Report:
    results: Sequence[CheckedManifest]
    problems: Sequence[Problem] = ()
    fail_on: FailOn = "rejected"
    skipped: Sequence[str] = ()
    """Files (or `<file>, document N`) passed over: documents of another apiVersion."""

    @property
    def status(self) -> GateStatus:
        if self.problems:
            return "error"
        return "failed" if any_failed(self.results, self.fail_on) else "passed"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]


def gate_failed(decision: Decision, fail_on: FailOn) -> bool:
    """Rejected always fails the gate; with `fail_on="experimental"`, experimental fails too."""
    if decision.verdict == "rejected":
        return True
    return fail_on == "experimental" and decision.verdict == "experimental"


def any_failed(results: Sequence[CheckedManifest], fail_on: FailOn) -> bool:
    return any(gate_failed(result.decision, fail_on) for result in results)


def ordered_violations(decision: Decision) -> list[Violation]:
    """Deny first, then waived, then warn; within a severity by rule, path and message."""
    return sorted(decision.violations, key=lambda v: (_SEVERITY_RANK[v.severity], *v.sort_key()))


def subject(decision: Decision) -> str:
    return f"{decision.manifest.kind}/{decision.manifest.name}"


def problem_line(problem: Problem) -> int | None:
    """The 1-based line of the problem's field in its file, when the text shows it."""
    if problem.line is not None:
        return problem.line
    if problem.field is None or problem.document_index is None:
        return None
    return locate(problem.text, problem.field, problem.document_index)


def summary_line(report: Report) -> str:
    """`N manifests: X supported, Y experimental, Z rejected[; E errors]; gate: <status> (...)`."""
    verdicts = Counter(result.decision.verdict for result in report.results)
    count = len(report.problems)
    errors = f"; {count} error{'' if count == 1 else 's'}" if count else ""
    return (
        f"{len(report.results)} manifests: {verdicts['supported']} supported, "
        f"{verdicts['experimental']} experimental, {verdicts['rejected']} rejected{errors}; "
        f"gate: {report.status} (fail on {report.fail_on})"
    )


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def printable(value: str) -> str:
    """`value` with control characters other than tab, CR and LF written as `\\xNN`.

    Messages quote manifest values; this keeps terminal escape sequences out of reports.
    """
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", value)
