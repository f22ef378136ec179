"""What happened, told after the commit: the ledger's events and the one registry of reactions.

The ledger's writer thread (supportgate/ledger/writer.py) publishes a batch's events after
its commit and before the submitter hears back, so a caller that gets its answer also finds
the reactions done (a sweep queued, a cache reloaded). Handlers are registered in one place,
supportgate.runtime.react; they run in the publishing thread and must not wait for a write of
the ledger.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, Literal, TypeVar

import msgspec

from supportgate.logging import get_logger

log = get_logger(__name__)


class _Event(msgspec.Struct, frozen=True, tag_field="event", kw_only=True):
    """Tagged by its kind, so a list of them decodes."""


class HardwareRecorded(_Event, frozen=True, tag="hardware-recorded"):
    """A submission of HardwareManifest `name` was recorded: the deployments on that pool
    judged before `evaluated_at` are to be re-evaluated."""

    name: str
    decision_id: str
    evaluated_at: datetime


class MatrixPublished(_Event, frozen=True, tag="matrix-published"):
    version: str


class WaiverChanged(_Event, frozen=True, tag="waiver-changed"):
    """A waiver was created or deleted; `affects_tracked`: its manifest is tracked and the
    change may move its verdict (deleting an expired waiver does not)."""

    waiver_id: str
    action: Literal["created", "deleted"]
    kind: str
    name: str
    affects_tracked: bool

    @property
    def trigger(self) -> str:
        """The sweep trigger of this change (one sweep per change, in any replica)."""
        return f"waiver:{self.waiver_id}:{self.action}"


class DecisionCount(msgspec.Struct, frozen=True, array_like=True):
    verdict: str
    cause: str
    count: int


class DecisionsRecorded(_Event, frozen=True, tag="decisions-recorded"):
    counts: list[DecisionCount]


class DeliveriesEnqueued(_Event, frozen=True, tag="deliveries-enqueued"):
    count: int


class SweepEnded(_Event, frozen=True, tag="sweep-ended"):
    sweep_id: str
    status: Literal["finished", "failed"]


class JobFailed(_Event, frozen=True, tag="job-failed"):
    """A scheduled job (reevaluation/schedule.py) failed; it runs again at its next time."""

    job: str


class PolicyReloadFailed(_Event, frozen=True, tag="policy-reload-failed"):
    """The policy files changed and were refused; `kept` stays in force. `revision`: the one
    refused (None when the files could not be read); `problems`: each `file:line: message`."""

    revision: str | None
    kept: str
    problems: list[str]
    at: datetime


Event = (
    HardwareRecorded
    | MatrixPublished
    | WaiverChanged
    | DecisionsRecorded
    | DeliveriesEnqueued
    | SweepEnded
    | JobFailed
    | PolicyReloadFailed
)

E = TypeVar("E", bound=_Event)


def decisions_recorded(verdicts_and_causes: Iterable[tuple[str, str]]) -> DecisionsRecorded:
    counted = Counter(verdicts_and_causes)
    return DecisionsRecorded(
        counts=[DecisionCount(verdict, cause, n) for (verdict, cause), n in counted.items()]
    )


class Events:
    def __init__(self) -> None:
        self._handlers: defaultdict[type[Any], list[Callable[[Any], None]]] = defaultdict(list)

    def on(self, event_type: type[E], handler: Callable[[E], None]) -> None:
        self._handlers[event_type].append(handler)

    def publish(self, events: Iterable[Event]) -> None:
        """Run each event's handlers in order. The write is committed whatever they do: a
        failing handler is logged and the others still run (a later sweep catches up)."""
        for event in events:
            for handler in self._handlers.get(type(event), ()):
                try:
                    handler(event)
                except Exception:  # see the docstring: the commit stands
                    log.exception("event_handler_failed", event_type=type(event).__name__)
