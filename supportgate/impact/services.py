"""POST /v1/matrix/impact: which tracked manifests would change verdict under a proposed matrix,
each evaluated twice at the same instant, in-process even under OPA (docs/waivers.md says why)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.evaluations.evaluator import Evaluation, Evaluator
from supportgate.logging import get_logger
from supportgate.manifests import Format, decode_matrix
from supportgate.manifests.decision import ManifestRef, Severity, Verdict, Violation
from supportgate.manifests.reasons import verdict_reason
from supportgate.matrix import prepare
from supportgate.matrix.services import MatrixService
from supportgate.policy.embedded import EmbeddedEngine
from supportgate.policy.engine import LoadedMatrix
from supportgate.policy.live import LivePolicies
from supportgate.reevaluation.source import iter_tracked_batches, subjects
from supportgate.threads import thread_twin
from supportgate.waivers.services import WaiverService

log = get_logger(__name__)

RULE_SEVERITIES: tuple[Severity, ...] = ("deny", "warn")  # compared; a waived deny is neither


class VerdictChange(msgspec.Struct, frozen=True, kw_only=True):
    manifest: ManifestRef
    from_: Verdict = msgspec.field(name="from")
    to: Verdict
    rules_added: list[str]
    """Deny and warn rule ids the proposed matrix adds to the manifest's violations."""
    rules_removed: list[str]
    violations_added: list[Violation]
    """Why, by (rule, severity) pair: supportgate/manifests/reasons.py."""
    violations_removed: list[Violation]


class ImpactReport(msgspec.Struct, frozen=True, kw_only=True):
    proposed_version: str
    current_version: str
    evaluated: int
    changed: list[VerdictChange]
    """In (kind, name) order."""


@dataclass(frozen=True, kw_only=True)
class ImpactAnalysis:
    sessions: sessionmaker[Session]
    policies: LivePolicies
    matrices: MatrixService
    waivers: WaiverService
    clock: Clock = SYSTEM_CLOCK

    def analyse_document(self, data: bytes, *, fmt: Format) -> ImpactReport:
        return self.analyse(prepare(decode_matrix(data, fmt=fmt)))

    analyse_document_in_thread = thread_twin(analyse_document)

    def analyse(self, proposed: LoadedMatrix) -> ImpactReport:
        now = self.clock.now()
        current = self.matrices.current(now)
        engine = EmbeddedEngine(self.policies.bundle)  # the policies in force now
        before = Evaluator(engine, current.loaded)
        after = Evaluator(engine, proposed)
        evaluated = 0
        changed: list[VerdictChange] = []
        for batch in iter_tracked_batches(self.sessions):
            waivers = self.waivers.active_by_manifest(batch.keys, now)
            batch_subjects = subjects(batch, "matrix", waivers)
            evaluated += len(batch_subjects)
            changed += _changes(
                before.evaluate_batch(batch_subjects, evaluated_at=now, hardware=batch.hardware),
                after.evaluate_batch(batch_subjects, evaluated_at=now, hardware=batch.hardware),
            )
        log.info(
            "matrix_impact",
            proposed_version=proposed.version,
            current_version=current.version,
            evaluated=evaluated,
            changed=len(changed),
        )
        return ImpactReport(
            proposed_version=proposed.version,
            current_version=current.version,
            evaluated=evaluated,
            changed=changed,
        )


def _changes(before: Sequence[Evaluation], after: Sequence[Evaluation]) -> list[VerdictChange]:
    found: list[VerdictChange] = []
    for was, would in zip(before, after, strict=True):
        old, new = was.decision, would.decision
        if old.verdict == new.verdict:
            continue
        old_rules, new_rules = old.rules(*RULE_SEVERITIES), new.rules(*RULE_SEVERITIES)
        reason = verdict_reason(old, new, RULE_SEVERITIES)
        found.append(
            VerdictChange(
                manifest=new.manifest,
                from_=old.verdict,
                to=new.verdict,
                rules_added=sorted(new_rules - old_rules),
                rules_removed=sorted(old_rules - new_rules),
                violations_added=list(reason.gained),
                violations_removed=list(reason.lost),
            )
        )
    return found
