"""What changed between the fleet at two dates: the manifests whose verdict differs, or that
were tracked at one date and not at the other, each with the decision that turned it."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy import select
from sqlmodel import Session

from supportgate.db import Decision as DecisionRow
from supportgate.db import table_of
from supportgate.ledger.rows import DECISION_COLUMNS, decision_from_columns
from supportgate.manifests.decision import Decision

from .query import FleetAt, FleetManifest, Key

_decisions = table_of(DecisionRow)


@dataclass(frozen=True, slots=True)
class FleetChange:
    """One manifest whose standing differs between the two dates (None: not tracked then)."""

    kind: str
    name: str
    before: FleetManifest | None
    after: FleetManifest | None
    turn: Decision | None = None
    """The first of the run of decisions since the earlier date that ends in `after` with its
    verdict: its cause and matrix version are the change's, not a later one's that kept it."""

    @property
    def before_verdict(self) -> str | None:
        return None if self.before is None else self.before.decision.verdict

    @property
    def after_verdict(self) -> str | None:
        return None if self.after is None else self.after.decision.verdict


def verdict_changes(session: Session, earlier: FleetAt, later: FleetAt) -> list[FleetChange]:
    """Tracked at one date only counts as a change."""
    before: dict[Key, FleetManifest] = {(m.kind, m.name): m for m in earlier.manifests}
    after: dict[Key, FleetManifest] = {(m.kind, m.name): m for m in later.manifests}
    changes = []
    for key in sorted(before.keys() | after.keys()):
        change = FleetChange(key[0], key[1], before.get(key), after.get(key))
        if change.before_verdict == change.after_verdict:
            continue
        if change.after is not None:
            change = replace(change, turn=_turn(session, change.after.decision, earlier))
        changes.append(change)
    return changes


def _turn(session: Session, latest: Decision, earlier: FleetAt) -> Decision:
    """Walk the manifest's decisions recorded after `earlier` back from `latest` while they
    have its verdict; the last one walked."""
    c = _decisions.c
    walked = session.execute(
        select(c.seq, c.verdict)
        .where(
            c.kind == latest.manifest.kind,
            c.name == latest.manifest.name,
            c.leaf_index <= latest.leaf_index,
            c.recorded_at > earlier.as_of,
        )
        .order_by(c.seq.desc())
    )
    turning = None
    for seq, verdict in walked:
        if verdict != latest.verdict:
            break
        turning = seq
    if turning is None:
        return latest
    row = session.execute(
        select(*(c[column] for column in DECISION_COLUMNS)).where(c.seq == turning)
    ).mappings()
    return decision_from_columns(row.one())
