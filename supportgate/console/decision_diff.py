"""The difference between two decisions of one manifest: verdict, violations added, removed
or changed, claims, checklist, recommendations, and what they were made under."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

import msgspec

from supportgate.manifests.decision import Decision, Violation

Change = Literal["added", "removed", "changed"]


@dataclass(frozen=True, slots=True)
class FieldChange:
    field: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class ViolationChange:
    change: Change
    rule: str
    path: str
    before: Violation | None
    after: Violation | None


@dataclass(frozen=True, slots=True)
class DecisionDiff:
    older: Decision
    newer: Decision
    verdict: FieldChange | None
    violations: tuple[ViolationChange, ...]
    unchanged_violations: int
    claims: tuple[FieldChange, ...]
    checklist: tuple[FieldChange, ...]
    recommendations_added: tuple[str, ...]
    recommendations_removed: tuple[str, ...]
    context: tuple[FieldChange, ...]
    """matrix_version, policy_revision, cause and input_digest, where they differ."""

    @property
    def same(self) -> bool:
        return not (
            self.verdict
            or self.violations
            or self.claims
            or self.checklist
            or self.recommendations_added
            or self.recommendations_removed
        )


def diff_decisions(first: Decision, second: Decision) -> DecisionDiff:
    older, newer = sorted((first, second), key=lambda d: (d.evaluated_at, d.id))
    changes, unchanged = _violations(older.violations, newer.violations)
    old_recs, new_recs = set(older.recommendations), set(newer.recommendations)
    return DecisionDiff(
        older=older,
        newer=newer,
        verdict=_field("verdict", older.verdict, newer.verdict),
        violations=changes,
        unchanged_violations=unchanged,
        claims=_fields(msgspec.to_builtins(older.claims), msgspec.to_builtins(newer.claims)),
        checklist=_fields(
            msgspec.to_builtins(older.checklist), msgspec.to_builtins(newer.checklist)
        ),
        recommendations_added=tuple(sorted(new_recs - old_recs)),
        recommendations_removed=tuple(sorted(old_recs - new_recs)),
        context=tuple(
            change
            for name in ("matrix_version", "policy_revision", "cause", "input_digest")
            if (change := _field(name, getattr(older, name), getattr(newer, name))) is not None
        ),
    )


def _violations(
    old: tuple[Violation, ...], new: tuple[Violation, ...]
) -> tuple[tuple[ViolationChange, ...], int]:
    """Violations matched on (rule, path), in order where a pair repeats; the changes, and
    how many stayed the same."""
    before, after = _by_key(old), _by_key(new)
    changes: list[ViolationChange] = []
    unchanged = 0
    for key in sorted(before.keys() | after.keys()):
        rule, path, _ = key
        was, now = before.get(key), after.get(key)
        if was is None:
            changes.append(ViolationChange("added", rule, path, None, now))
        elif now is None:
            changes.append(ViolationChange("removed", rule, path, was, None))
        elif was != now:
            changes.append(ViolationChange("changed", rule, path, was, now))
        else:
            unchanged += 1
    return tuple(changes), unchanged


def _by_key(violations: tuple[Violation, ...]) -> dict[tuple[str, str, int], Violation]:
    seen: defaultdict[tuple[str, str], int] = defaultdict(int)
    keyed = {}
    for violation in violations:
        index = seen[(violation.rule, violation.path)]
        seen[(violation.rule, violation.path)] += 1
        keyed[(violation.rule, violation.path, index)] = violation
    return keyed


def _field(name: str, before: object, after: object) -> FieldChange | None:
    return None if before == after else FieldChange(name, _text(before), _text(after))


def _fields(before: dict[str, object], after: dict[str, object]) -> tuple[FieldChange, ...]:
    return tuple(
        change
        for name in sorted(before.keys() | after.keys())
        if (change := _field(name, before.get(name), after.get(name))) is not None
    )


def _text(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
