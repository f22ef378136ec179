"""What the ledger is asked to write (`Batch`, one transaction) and what it did (`Applied`):
plain data. Every part of a batch can change a verdict, so every one goes through the writer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import msgspec

from supportgate.events import Event
from supportgate.manifests.decision import Decision
from supportgate.policy.inputs import format_time

Key = tuple[str, str]
"""(kind, name): a tracked manifest."""


class _Data(msgspec.Struct, frozen=True, kw_only=True):
    pass


class Tracking(_Data, frozen=True):
    """The manifest content to track under (kind, name) with the decision, and the authority
    of the key that submitted it, which the writer holds against the tracked owner under the
    head lock (write._admit): a concurrent submission cannot slip in between."""

    content: dict[str, Any]
    content_digest: str
    owner: str | None
    hardware_ref: str | None
    changes_owner: bool = False
    """The key may change a tracked manifest's owner (an admin's, which acts for every owner)."""

    def may_replace(self, held_by: str | None) -> bool:
        return held_by == self.owner or self.changes_owner


class IdempotentAnswer(_Data, frozen=True):
    """The response to store for (API key, Idempotency-Key); its body is the decision with the
    leaf_index the write gives it (decisions.decision_body, as the API answers)."""

    api_key_id: int
    key: str
    request_digest: str
    status_code: int


class TrackedHead(_Data, frozen=True):
    """Where a tracked manifest stood when a sweep read it."""

    content_digest: str
    latest_decision_id: str | None


class DecisionWrite(_Data, frozen=True):
    decision: Decision
    policy_input: str
    """The canonical policy input, as the engine was given it (its digest is the decision's
    `input_digest`), stored so that the decision can be replayed."""
    tracking: Tracking | None = None
    """A submission: the tracked manifest becomes this content with this decision."""
    idempotency: IdempotentAnswer | None = None
    expected: TrackedHead | None = None
    """A sweep's decision: written only while its tracked manifest is still at this head (no
    submission or untracking came between the sweep's read and this write); the manifest's
    latest decision then moves to it."""

    @property
    def key(self) -> Key:
        return (self.decision.manifest.kind, self.decision.manifest.name)


class SweepMemo(_Data, frozen=True):
    """What a sweep learnt of a manifest (supportgate/reevaluation/memo.py)."""

    kind: str
    name: str
    key: str
    stable_until: datetime | None


class SweepProgress(_Data, frozen=True):
    """A sweep's batch, committed with its decisions: the sweep resumes after it."""

    sweep_id: str
    cursor: Key
    evaluated: int
    failed: int
    unchanged: list[Key]
    """Judged as before: only their last_evaluated_at moves (to `touched_at`)."""
    touched_at: datetime
    memos: list[SweepMemo]
    """Saved, except those of decisions not admitted (their manifest moved meanwhile)."""


class Provenance(_Data, frozen=True):
    """Where a matrix version read from a source came from (supportgate/matrix_sources/)."""

    source: str
    """The source as configured, without credentials."""
    revision: str
    """The commit read, or the ETag (`sha256:<hex>` of the body when the server sent none)."""
    fetched_at: datetime

    def document(self) -> dict[str, str]:
        """As stored on the version and in its log entry (times RFC 3339 UTC)."""
        return {
            "source": self.source,
            "revision": self.revision,
            "fetched_at": format_time(self.fetched_at),
        }


class MatrixPublication(_Data, frozen=True):
    version: str
    document: dict[str, Any]
    """The matrix as published (supportgate.manifests.to_builtins)."""
    digest: str
    effective_from: datetime | None
    published_at: datetime
    published_by: str | None
    provenance: Provenance | None = None
    """Set when the version was read from a matrix source; None when it was posted."""


class WaiverCreation(_Data, frozen=True):
    id: str
    rule: str
    kind: str
    name: str
    justification: str
    expires_at: datetime
    created_by: str
    created_at: datetime


class WaiverDeletion(_Data, frozen=True):
    id: str
    deleted_by: str
    deleted_at: datetime


class Untracking(_Data, frozen=True):
    kind: str
    name: str
    untracked_by: str | None
    at: datetime


class Batch(_Data, frozen=True):
    """What one transaction writes; the parts are applied in this order."""

    decisions: list[DecisionWrite] = msgspec.field(default_factory=list)
    matrices: list[MatrixPublication] = msgspec.field(default_factory=list)
    waivers_created: list[WaiverCreation] = msgspec.field(default_factory=list)
    waivers_deleted: list[WaiverDeletion] = msgspec.field(default_factory=list)
    untracked: list[Untracking] = msgspec.field(default_factory=list)
    sweep: SweepProgress | None = None


class Conflict(_Data, frozen=True):
    """A part of a batch the state did not allow, left out (the rest is written)."""

    part: Literal["matrix", "waiver-deleted", "untracked"]
    """`matrix`: the version is published already; `waiver-deleted`: no waiver with that id
    is undeleted; `untracked`: the manifest is not tracked."""
    key: str
    """The version, the waiver id, or `kind/name`."""


class Applied(_Data, frozen=True):
    """What a batch did, in the batch's order."""

    decisions: list[int | None]
    """Each decision's place in the log, or None when it was not admitted: a sweep's whose
    manifest moved (DecisionWrite.expected), a submission whose key may not replace the
    tracked manifest's owner (Tracking.may_replace)."""
    conflicts: list[Conflict]
    events: list[Event]
    """What happened, for supportgate.events.Events.publish once the commit is known."""
    bodies: dict[str, bytes] = msgspec.field(default_factory=dict)
    """The API's body of each decision stored as an Idempotency-Key's answer, by decision id."""

    @property
    def recorded(self) -> int:
        return sum(position is not None for position in self.decisions)

    def conflicts_in(self, part: str) -> set[str]:
        return {conflict.key for conflict in self.conflicts if conflict.part == part}
