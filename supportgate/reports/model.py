"""What every report format shares: the checked manifests, the problems, the gate (its status
is `check`'s exit code) and the summary. An error outranks a failure: a report with problems
never says "passed"."""

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
    source: str  # the file path as the user gave it
    decision: Decision
    text: str | None  # the file's text, to find line numbers
    document_index: int = 0  # which YAML document of a stream the manifest is
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Problem:
    """Something that kept `check` from judging an input (exit 2). `message` is the whole
    sentence for people; `field` the JSON path of the failing field (`$` for the whole
    document) or the option (`--at`); `line` and `column` (1-based) when the decoder knew,
    else `text` and `document_index` locate the field's line."""

    message: str
    source: str | None = None
    field: str | None = None
    text: str | None = None
    document_index: int | None = None
    line: int | None = None
    column: int | None = None

    def located(self) -> str:
        """The message, with its line and column unless it says them."""
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
        failed = any(gate_failed(result.decision, self.fail_on) for result in self.results)
        return "failed" if failed else "passed"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]


def gate_failed(decision: Decision, fail_on: FailOn) -> bool:
    if decision.verdict == "rejected":
        return True
    return fail_on == "experimental" and decision.verdict == "experimental"


def ordered_violations(decision: Decision) -> list[Violation]:
    return sorted(decision.violations, key=lambda v: (_SEVERITY_RANK[v.severity], *v.sort_key()))


def subject(decision: Decision) -> str:
    return f"{decision.manifest.kind}/{decision.manifest.name}"


def problem_line(problem: Problem) -> int | None:
    if problem.line is not None:
        return problem.line
    if problem.field is None or problem.document_index is None:
        return None
    return locate(problem.text, problem.field, problem.document_index)


def summary_line(report: Report) -> str:
    verdicts = Counter(result.decision.verdict for result in report.results)
    count = len(report.problems)
    errors = f"; {count} error{'' if count == 1 else 's'}" if count else ""
    return (
        f"{len(report.results)} manifests: {verdicts['supported']} supported, "
        f"{verdicts['experimental']} experimental, {verdicts['rejected']} rejected{errors}; "
        f"gate: {report.status} (fail on {report.fail_on})"
    )


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def relative_path(source: str) -> str:
    """Forward slashes, no leading `./`: the path CI tools resolve against the workspace."""
    path = source.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def printable(value: str) -> str:
    """Messages quote manifest values: control characters (but tab, CR, LF) become `\\xNN`,
    so that no terminal escape sequence reaches a report."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", value)
