"""POST /v1/evaluations/dry-run (CONTRACT 11.1): manifests judged as POST /v1/evaluations
judges one, owner scoping included, with nothing written (so no alert and no webhook either:
both follow the log)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.auth import Principal
from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import transaction
from supportgate.ledger.batches import Tracking
from supportgate.manifests import Format, HardwareManifest, Manifest
from supportgate.manifests.decode import decode_manifest_request
from supportgate.matrix.services import MatrixService
from supportgate.policy import PolicyEngine
from supportgate.policy.inputs import hardware_ref
from supportgate.threads import in_thread
from supportgate.waivers.services import WaiverService

from . import repository
from .evaluator import Evaluator, Subject
from .services import check_owner, owned_by_another
from .views import DryRunAnswer, UnrecordedDecision

MAX_MANIFESTS = 100


class DryRunService:
    def __init__(
        self,
        *,
        sessions: sessionmaker[Session],
        engine: PolicyEngine,
        matrices: MatrixService,
        waivers: WaiverService,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._sessions = sessions
        self._engine = engine
        self._matrices = matrices
        self._waivers = waivers
        self._clock = clock

    @in_thread
    def judge(self, *, body: bytes, fmt: Format, principal: Principal) -> DryRunAnswer:
        manifests = decode_manifest_request(body, fmt=fmt, limit=MAX_MANIFESTS)
        for manifest in manifests:
            check_owner(principal, manifest)
        pools = {m.metadata.name: m for m in manifests if isinstance(m, HardwareManifest)}
        wanted = {hardware_ref(m) for m in manifests} - set(pools) - {None}
        tracked = self._tracked_state(manifests, principal, sorted(str(n) for n in wanted))
        pools = tracked | pools  # the request's own pools come first
        now = self._clock.now()
        evaluator = Evaluator(self._engine, self._matrices.current(now).loaded)
        subjects = [
            Subject(m, waivers=self._waivers.active_for(m.kind, m.metadata.name, now))
            for m in manifests
        ]
        evaluations = evaluator.evaluate_batch(subjects, evaluated_at=now, hardware=pools.get)
        return DryRunAnswer(
            decisions=[
                UnrecordedDecision(
                    **msgspec.structs.asdict(evaluation.decision) | {"id": None}, recorded=False
                )
                for evaluation in evaluations
            ]
        )

    def _tracked_state(
        self, manifests: Sequence[Manifest], principal: Principal, refs: list[str]
    ) -> dict[str, HardwareManifest]:
        """After refusing (403) a manifest whose owner a submission could not change."""
        with transaction(self._sessions) as session:
            for manifest in manifests:
                row = repository.tracked(session, manifest.kind, manifest.metadata.name)
                if row is not None and not _tracking(manifest, principal).may_replace(row.owner):
                    raise owned_by_another(manifest)
            rows = [repository.tracked(session, "HardwareManifest", name) for name in refs]
            return {
                row.name: msgspec.convert(row.content, HardwareManifest)
                for row in rows
                if row is not None
            }


def _tracking(manifest: Manifest, principal: Principal) -> Tracking:
    """What a submission would claim (only its owner matters)."""
    return Tracking(
        content={},
        content_digest="",
        owner=manifest.metadata.owner,
        hardware_ref=None,
        changes_owner=principal.role == "admin",
    )
