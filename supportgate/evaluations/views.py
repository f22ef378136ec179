"""Response bodies of the evaluation and tracked-manifest endpoints."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import msgspec

from supportgate.manifests.decision import Decision


class _View(msgspec.Struct, frozen=True, kw_only=True):
    """Base of response bodies."""


class TrackedManifest(_View, frozen=True):
    kind: str
    name: str
    owner: str | None
    content: dict[str, Any]
    latest_decision: Decision | None
    tracked_since: datetime
    updated_at: datetime
    last_evaluated_at: datetime | None


class TrackedManifestPage(_View, frozen=True):
    items: list[TrackedManifest]
    next_cursor: str | None


class DecisionPage(_View, frozen=True):
    items: list[Decision]
    next_cursor: str | None


class UnrecordedDecision(Decision, frozen=True, kw_only=True):
    """A dry run's decision: as POST /v1/evaluations answers, but with `id: null`,
    `recorded: false` and no `leaf_index` (nothing was written)."""

    id: None  # type: ignore[assignment] # a Decision that has no identity, being unrecorded
    recorded: Literal[False]


class DryRunAnswer(_View, frozen=True):
    decisions: list[UnrecordedDecision]
