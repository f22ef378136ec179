"""Why a verdict changed, for alerts and the impact analysis: a verdict follows from its
violations' severities, so a change always comes with a (rule, severity) gained or lost."""

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
    lost: tuple[Violation, ...]


def verdict_reason(
    before: Judged | None, after: Judged, severities: tuple[Severity, ...] = ()
) -> Reason:
    """How `after` differs from `before` (None: nothing before), counting only violations of
    `severities` (none given: every severity, `waived` too), each list in rule order."""
    old = _counted(before.violations if before else (), severities)
    new = _counted(after.violations, severities)
    return Reason(gained=_unmatched(new, old), lost=_unmatched(old, new))


def _unmatched(
    violations: tuple[Violation, ...], others: tuple[Violation, ...]
) -> tuple[Violation, ...]:
    pairs = {(v.rule, v.severity) for v in others}
    found = (v for v in violations if (v.rule, v.severity) not in pairs)
    return tuple(sorted(found, key=Violation.sort_key))


def _counted(
    violations: tuple[Violation, ...], severities: tuple[Severity, ...]
) -> tuple[Violation, ...]:
    return tuple(v for v in violations if not severities or v.severity in severities)
