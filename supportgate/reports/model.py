"""What every report format shares: the checked manifest, the gate and the summary."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from supportgate.manifests.decision import Decision, Severity, Violation

FailOn = Literal["rejected", "experimental"]
FAIL_ON: tuple[FailOn, ...] = ("rejected", "experimental")

_SEVERITY_RANK: dict[Severity, int] = {"deny": 0, "waived": 1, "warn": 2}


@dataclass(frozen=True, slots=True)
class CheckedManifest:
    """One manifest that `supportgate check` evaluated.

    `source` is the file path as the user gave it; `text` is that file's text (used only to
    find line numbers, `None` when unknown); `document_index` says which YAML document of a
    multi-document file the manifest is.
    """

    source: str
    decision: Decision
    text: str | None
    document_index: int = 0


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
    """`<Kind>/<name>`, the way reports name a manifest."""
    return f"{decision.manifest.kind}/{decision.manifest.name}"


def summary_line(results: Sequence[CheckedManifest], fail_on: FailOn) -> str:
    """`N manifests: X supported, Y experimental, Z rejected; gate: passed|failed (fail on ...)`."""
    verdicts = Counter(result.decision.verdict for result in results)
    gate = "failed" if any_failed(results, fail_on) else "passed"
    return (
        f"{len(results)} manifests: {verdicts['supported']} supported, "
        f"{verdicts['experimental']} experimental, {verdicts['rejected']} rejected; "
        f"gate: {gate} (fail on {fail_on})"
    )


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def printable(value: str) -> str:
    """`value` with control characters other than tab, CR and LF written as `\\xNN`.

    Messages quote manifest values; this keeps terminal escape sequences out of reports.
    """
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", value)
