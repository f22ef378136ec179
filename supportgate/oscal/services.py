"""The OSCAL report of the fleet at a time: the log's fleet-at-T query (supportgate/fleet/,
which `GET /v1/manifests?as_of=T` and `GET /v1/reports/fleet` answer from), rendered."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.errors import UsageError
from supportgate.fleet.services import FleetService
from supportgate.pagination import parse_time
from supportgate.policy import PolicyEngine
from supportgate.threads import thread_twin

from .document import assessment_results


@dataclass(kw_only=True, eq=False)  # a service: equal only to itself
class OscalReports:
    fleet: FleetService
    engine: PolicyEngine
    clock: Clock = SYSTEM_CLOCK

    def as_of(self, text: str | None, *, field: str) -> datetime:
        """Now when absent. A time after now is refused: the fleet then is not known yet."""
        now = self.clock.now()
        at = parse_time(field, text)
        if at is None:
            return now
        if at > now:
            raise UsageError(f"{text} is in the future: the fleet is known up to now", field=field)
        return at

    def document(self, as_of: datetime) -> bytes:
        fleet = self.fleet.at(as_of)
        # Before any decision was recorded no revision is known from the log: the running
        # engine's is the basis then.
        revision = fleet.policy_revision or self.engine.policy_revision
        return assessment_results(fleet, policy_revision=revision)

    document_in_thread = thread_twin(document)
