"""The fleet at time T, from the recorded history alone.

What T means: the state the log had once every entry recorded at or before T (its
`recorded_at`, the service clock's time when the writer appended it) was applied, and no later
one. So at T:

- a manifest's current decision is its latest decision (in log order: `seq`, which follows
  the leaves) among those recorded at or before T. A sweep's decision is current from its
  recorded_at on; a waiver changes a verdict only through the decision that applied it (a
  waiver created, deleted or expired changes nothing until a decision says so);
- a manifest is tracked at T when it has such a decision and no `untracked` entry recorded at
  or before T comes after that decision in the log (an untracked manifest posted again is
  tracked again from that decision on, as supportgate/audit/tracking_state.py reads the log);
- its content and owner are those of its current decision's stored policy input (a sweep
  evaluates the tracked content, a submission brings new content);
- the matrix version in force is the one applied at T among the versions published at or
  before T (matrix/services.py's rule: the latest to take effect, ties to the latest
  published); the policy revision in force is that of the latest decision recorded at or
  before T (the policies are the service's code: only its decisions record them).

The same query answers every T, now included, so a date a year back costs what now costs:
one grouping of the decisions recorded at or before T by (kind, name), read from
ix_decisions_kind_name_recorded_at_seq alone on PostgreSQL, then the rows of the winners.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import Table, func, select
from sqlmodel import Session

from supportgate.db import Decision as DecisionRow
from supportgate.db import LedgerEntry, MatrixVersion
from supportgate.ledger.rows import DECISION_COLUMNS, decision_from_columns
from supportgate.manifests.decision import Decision

_decisions: Table = DecisionRow.__table__  # type: ignore[attr-defined]
_entries: Table = LedgerEntry.__table__  # type: ignore[attr-defined]
_matrices: Table = MatrixVersion.__table__  # type: ignore[attr-defined]

Key = tuple[str, str]
"""(kind, name) of a manifest."""


@dataclass(frozen=True, slots=True)
class FleetManifest:
    """One manifest tracked at T."""

    kind: str
    name: str
    owner: str | None
    """`metadata.owner` of the content tracked at T."""
    decision: Decision
    """The decision current for it at T (with its `leaf_index`)."""
    policy_input: str = field(repr=False)
    """The current decision's stored policy input (its `input_digest` covers it)."""

    def content(self) -> dict[str, Any]:
        """The manifest tracked at T: the `manifest` of the stored policy input (decoded
        on demand: a report needs only the owner)."""
        return _content_decoder.decode(self.policy_input).manifest


@dataclass(frozen=True, slots=True)
class FleetAt:
    """The fleet as the log stood at `as_of` (module docstring: what that means)."""

    as_of: datetime
    manifests: tuple[FleetManifest, ...]
    """Every manifest tracked at as_of, in (kind, name) order."""
    matrix_version: str | None
    """The matrix version in force at as_of (None: none was published yet)."""
    policy_revision: str | None
    """The policy revision of the latest decision recorded at or before as_of (None: none)."""


class _Content(msgspec.Struct):
    manifest: dict[str, Any] = {}


class _Metadata(msgspec.Struct, frozen=True):
    owner: Any = None


class _Manifest(msgspec.Struct, frozen=True):
    metadata: _Metadata = _Metadata()


class _Owner(msgspec.Struct):
    """Only `manifest.metadata.owner` of a policy input: the rest is skipped, not built."""

    manifest: _Manifest = _Manifest()


_content_decoder = msgspec.json.Decoder(_Content)
_owner_decoder = msgspec.json.Decoder(_Owner)
_untracked_decoder = msgspec.json.Decoder(dict[str, Any])


def fleet_at(session: Session, as_of: datetime) -> FleetAt:
    """The fleet at `as_of` (an aware time; any time, past or now): three reads in `session`."""
    latest = (
        select(func.max(_decisions.c.seq).label("seq"))
        .where(_decisions.c.recorded_at <= as_of)
        .group_by(_decisions.c.kind, _decisions.c.name)
        .subquery("latest")
    )
    columns = [_decisions.c[column] for column in DECISION_COLUMNS]
    statement = (
        select(*columns, _decisions.c.policy_input)
        .join(latest, _decisions.c.seq == latest.c.seq)
        .order_by(_decisions.c.kind, _decisions.c.name)
    )
    rows = session.execute(statement).mappings().all()
    untracked = _untracked_at(session, as_of)
    manifests = []
    policy_revision, newest = None, -1
    for row in rows:
        if row["seq"] > newest:
            policy_revision, newest = row["policy_revision"], row["seq"]
        if untracked.get((row["kind"], row["name"]), -1) > row["leaf_index"]:
            continue
        owner = _owner_decoder.decode(row["policy_input"]).manifest.metadata.owner
        manifests.append(
            FleetManifest(
                kind=row["kind"],
                name=row["name"],
                owner=owner if isinstance(owner, str) else None,
                decision=decision_from_columns(row),
                policy_input=row["policy_input"],
            )
        )
    return FleetAt(
        as_of=as_of,
        manifests=tuple(manifests),
        matrix_version=_matrix_in_force(session, as_of),
        policy_revision=policy_revision,
    )


def _untracked_at(session: Session, as_of: datetime) -> dict[Key, int]:
    """(kind, name) -> the leaf of its last `untracked` entry recorded at or before as_of."""
    statement = select(_entries.c.leaf_index, _entries.c.entry).where(
        _entries.c.type == "untracked", _entries.c.recorded_at <= as_of
    )
    return _last_leaves((int(leaf), entry) for leaf, entry in session.execute(statement))


def _last_leaves(rows: Iterable[tuple[int, str]]) -> dict[Key, int]:
    found: dict[Key, int] = {}
    for leaf_index, entry in rows:
        manifest = _untracked_decoder.decode(entry)["manifest"]
        key = (manifest["kind"], manifest["name"])
        found[key] = max(found.get(key, -1), int(leaf_index))
    return found


def _matrix_in_force(session: Session, as_of: datetime) -> str | None:
    effective = func.coalesce(_matrices.c.effective_from, _matrices.c.published_at)
    statement = (
        select(_matrices.c.version)
        .where(_matrices.c.published_at <= as_of, effective <= as_of)
        .order_by(effective.desc(), _matrices.c.published_at.desc())
        .limit(1)
    )
    return session.execute(statement).scalar_one_or_none()
