"""The fleet at time T: the tracked spans (ledger/tracking.py) open at T, each with the decision
that opened it; what T means and how one query answers every T: docs/reports.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import Select, func, or_, select
from sqlmodel import Session

from supportgate.db import Decision as DecisionRow
from supportgate.db import MatrixVersion, TrackedSpan, table_of
from supportgate.ledger.rows import DECISION_COLUMNS, decision_from_columns
from supportgate.manifests.decision import Decision

_decisions = table_of(DecisionRow)
_spans = table_of(TrackedSpan)
_matrices = table_of(MatrixVersion)

Key = tuple[str, str]  # (kind, name)


@dataclass(frozen=True, slots=True)
class FleetManifest:
    kind: str
    name: str
    owner: str | None
    """`metadata.owner` of the content tracked at T."""
    decision: Decision
    """Current at T."""
    policy_input: str = field(repr=False)
    """The current decision's stored policy input (its `input_digest` covers it)."""

    def content(self) -> dict[str, Any]:
        """Decoded on demand: a report needs only the owner."""
        return _content_decoder.decode(self.policy_input).manifest


@dataclass(frozen=True, slots=True)
class FleetAt:
    as_of: datetime
    manifests: tuple[FleetManifest, ...]
    """In (kind, name) order."""
    matrix_version: str | None  # None: none was published yet
    policy_revision: str | None  # None: no decision yet


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


def fleet_at(session: Session, as_of: datetime) -> FleetAt:
    manifests = []
    for row in session.execute(decisions_in_force(as_of)).mappings():
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
    manifests.sort(key=lambda manifest: (manifest.kind, manifest.name))
    newest = select(func.max(_spans.c.leaf_index)).where(_spans.c.valid_from <= as_of)
    latest = select(_decisions.c.policy_revision).where(
        _decisions.c.leaf_index == newest.scalar_subquery()
    )
    policy_revision = session.execute(latest).scalar_one_or_none()
    return FleetAt(
        as_of=as_of,
        manifests=tuple(manifests),
        matrix_version=session.execute(matrix_in_force(as_of)).scalar_one_or_none(),
        policy_revision=policy_revision,
    )


def decisions_in_force(as_of: datetime) -> Select[Any]:
    """The decisions of the spans open at `as_of`, found by ix_tracked_spans_valid."""
    columns = [_decisions.c[column] for column in DECISION_COLUMNS]
    return (
        select(*columns, _decisions.c.policy_input)
        .join(_spans, _spans.c.leaf_index == _decisions.c.leaf_index)
        .where(
            _spans.c.valid_from <= as_of,
            or_(_spans.c.valid_to.is_(None), _spans.c.valid_to > as_of),
        )
    )


def matrix_in_force(as_of: datetime) -> Select[tuple[str]]:
    """The version in force at `as_of`, read by ix_matrix_versions_in_force."""
    effective = func.coalesce(_matrices.c.effective_from, _matrices.c.published_at)
    return (
        select(_matrices.c.version)
        .where(_matrices.c.published_at <= as_of, effective <= as_of)
        .order_by(effective.desc(), _matrices.c.published_at.desc())
        .limit(1)
    )
