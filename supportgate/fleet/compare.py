"""What changed between the fleet at two dates: the manifests whose verdict differs, or that
were tracked at one date and not at the other."""

from __future__ import annotations

from dataclasses import dataclass

from .query import FleetAt, FleetManifest, Key


@dataclass(frozen=True, slots=True)
class FleetChange:
    """One manifest whose standing differs between the two dates (None: not tracked then)."""

    kind: str
    name: str
    before: FleetManifest | None
    after: FleetManifest | None

    @property
    def before_verdict(self) -> str | None:
        return None if self.before is None else self.before.decision.verdict

    @property
    def after_verdict(self) -> str | None:
        return None if self.after is None else self.after.decision.verdict


def verdict_changes(earlier: FleetAt, later: FleetAt) -> list[FleetChange]:
    """The manifests whose verdict at `later` is not their verdict at `earlier` (tracked at
    one of them only counts as a change), in (kind, name) order."""
    before: dict[Key, FleetManifest] = {(m.kind, m.name): m for m in earlier.manifests}
    after: dict[Key, FleetManifest] = {(m.kind, m.name): m for m in later.manifests}
    changes = []
    for key in sorted(before.keys() | after.keys()):
        change = FleetChange(key[0], key[1], before.get(key), after.get(key))
        if change.before_verdict != change.after_verdict:
            changes.append(change)
    return changes
