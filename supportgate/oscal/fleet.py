"""What an OSCAL report is made from: the fleet at one time, as plain data.

Nothing here reads the database: `OscalReports.fleet_at` (services.py) fills an `OscalFleet`
and `document.assessment_results` renders it, so the document depends on these values only
(the same fleet at the same time gives the same bytes).
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from supportgate.manifests.decision import Decision, Verdict, Violation


class _Plain(msgspec.Struct, frozen=True, kw_only=True):
    pass


class FleetManifest(_Plain, frozen=True):
    """A tracked manifest and the decision that was current for it at the fleet's time."""

    kind: str
    name: str
    owner: str | None
    decision_id: str
    verdict: Verdict
    evaluated_at: datetime
    matrix_version: str
    """The decision's own: a manifest not yet re-evaluated under the matrix in force keeps
    the version it was judged under."""
    policy_revision: str
    leaf_index: int | None
    violations: tuple[Violation, ...]

    @classmethod
    def of(cls, owner: str | None, decision: Decision) -> FleetManifest:
        return cls(
            kind=decision.manifest.kind,
            name=decision.manifest.name,
            owner=owner,
            decision_id=decision.id,
            verdict=decision.verdict,
            evaluated_at=decision.evaluated_at,
            matrix_version=decision.matrix_version,
            policy_revision=decision.policy_revision,
            leaf_index=decision.leaf_index,
            violations=decision.violations,
        )


class OscalFleet(_Plain, frozen=True):
    """The fleet at `as_of`: the basis of the assessment and one entry per tracked manifest."""

    as_of: datetime
    matrix_version: str | None
    """The support matrix in force at `as_of` (None: none was yet)."""
    policy_revision: str
    manifests: tuple[FleetManifest, ...]
