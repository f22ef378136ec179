"""Why a verdict changed: the violations one decision has and the other has not.

A verdict follows from the severities of its violations (a deny rejects, a warn makes it
experimental), so a change of verdict always comes with a (rule, severity) pair gained or
lost. The reason lists those violations with their messages: the ones gained from the later
decision, the ones lost from the earlier. The console's alerts and the impact analysis
(POST /v1/matrix/impact) both explain a change this way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .decision import Severity, Violation


class Judged(Protocol):
    """A decision, or what of one a reason reads."""

    @property
    def violations(self) -> tuple[Violation, ...]: ...


@dataclass(frozen=True, slots=True)
class Reason:
    gained: tuple[Violation, ...]
    """Violations of the later decision whose (rule, severity) the earlier one did not have."""
    lost: tuple[Violation, ...]
    """Violations of the earlier decision whose (rule, severity) the later one does not have."""


def verdict_reason(
    before: Judged | None, after: Judged, severities: tuple[Severity, ...] = ()
) -> Reason:
    """How `after` differs from `before` (None: nothing before), counting only violations of
    `severities` (none given: every severity, `waived` too), each list in rule order."""
    old = _counted(before.violations if before else (), severities)
    new = _counted(after.violations, severities)
    old_pairs = {(v.rule, v.severity) for v in old}
    new_pairs = {(v.rule, v.severity) for v in new}
    return Reason(
        gained=tuple(
            sorted(
                (v for v in new if (v.rule, v.severity) not in old_pairs), key=Violation.sort_key
            )
        ),
        lost=tuple(
            sorted(
                (v for v in old if (v.rule, v.severity) not in new_pairs), key=Violation.sort_key
            )
        ),
    )


def _counted(
    violations: tuple[Violation, ...], severities: tuple[Severity, ...]
) -> tuple[Violation, ...]:
    return tuple(v for v in violations if not severities or v.severity in severities)
