"""The OSCAL report of the fleet at a time: the input gathered, the document rendered.

`fleet_at(as_of)` is the one place the fleet at a time is read. Until the log's fleet-at-T
query exists (issue 14, `GET /v1/manifests?as_of=T`), it answers the fleet as it is now
whatever `as_of` says: the tracked manifests with their latest decisions, the matrix version
and policy revision now in force. The query will replace its body, nothing else.
"""

from __future__ import annotations

from datetime import datetime

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.errors import UsageError
from supportgate.evaluations.tracking import TrackingService
from supportgate.matrix.services import MatrixService
from supportgate.pagination import MAX_LIMIT, parse_time
from supportgate.policy import PolicyEngine

from .document import assessment_results
from .fleet import FleetManifest, OscalFleet


class OscalReports:
    def __init__(
        self,
        *,
        tracking: TrackingService,
        matrices: MatrixService,
        engine: PolicyEngine,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._tracking = tracking
        self._matrices = matrices
        self._engine = engine
        self._clock = clock

    def as_of(self, text: str | None, *, field: str) -> datetime:
        """The report's time: `text` as RFC 3339 with a time zone, now when absent. A time
        after now is refused: the fleet then is not known yet. `field` names the input in
        the error (`as_of` in a URL, `--as-of` on the command line)."""
        now = self._clock.now()
        at = parse_time(field, text)
        if at is None:
            return now
        if at > now:
            raise UsageError(f"{text} is in the future: the fleet is known up to now", field=field)
        return at

    def document(self, as_of: datetime) -> bytes:
        """The fleet at `as_of` as an OSCAL Assessment Results JSON document."""
        return assessment_results(self.fleet_at(as_of))

    def fleet_at(self, as_of: datetime) -> OscalFleet:
        """The tracked manifests at `as_of` with the decision then current for each, and the
        matrix version and policy revision then in force. For now: the current fleet (see
        the module's docstring)."""
        manifests: list[FleetManifest] = []
        cursor: str | None = None
        while True:
            page = self._tracking.page(
                kind=None, verdict=None, owner=None, cursor=cursor, limit=MAX_LIMIT
            )
            # Every manifest is tracked by the write of its decision (ledger/tracking.py),
            # so each has one; a row without would have nothing to observe.
            manifests.extend(
                FleetManifest.of(item.owner, item.latest_decision)
                for item in page.items
                if item.latest_decision is not None
            )
            cursor = page.next_cursor
            if cursor is None:
                break
        return OscalFleet(
            as_of=as_of,
            matrix_version=self._matrices.current().version,
            policy_revision=self._engine.policy_revision,
            manifests=tuple(manifests),
        )
