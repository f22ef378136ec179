"""One sweep's batch: evaluate what the memo does not know unchanged, and make one ledger
Batch with the sweep's cursor (what is recorded, and why: docs/reevaluation.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import Clock
from supportgate.evaluations.evaluator import Evaluator
from supportgate.ledger.batches import Batch, DecisionWrite, SweepMemo, SweepProgress, TrackedHead
from supportgate.manifests.decision import Cause, Decision

from .memo import memo_key, stable_until
from .source import Key, TrackedBatch, TrackedRow, WaiversFor, subjects


@dataclass(frozen=True, slots=True)
class BatchSweeper:
    sweep_id: str
    cause: Cause
    evaluator: Evaluator
    sessions: sessionmaker[Session]
    waivers_for: WaiversFor
    clock: Clock
    use_memos: bool = True  # False: the plain path the memo is measured and tested against

    def judge(self, batch: TrackedBatch) -> tuple[Batch, int]:
        """The batch's decisions and progress, to write; the count the memo knew unchanged
        (its content is not even read)."""
        now = self.clock.now()
        waivers = self.waivers_for(batch.keys)
        keys = {
            row.key: self._key(batch, row, waivers.get(row.key, ()), row.latest_decision_id)
            for row in batch.rows
        }
        held = {
            row.key
            for row in batch.rows
            if self.use_memos
            and row.memo is not None
            and row.memo[0] == keys[row.key]
            and row.memo[1] is not None
            and now < row.memo[1]
        }
        to_evaluate = [row for row in batch.rows if row.key not in held]
        batch.load_content(self.sessions, to_evaluate)
        decisions: list[DecisionWrite] = []
        unchanged = [row.key for row in batch.rows if row.key in held]
        memos: dict[Key, SweepMemo] = {}
        evaluable = [row for row in to_evaluate if row.manifest is not None]
        evaluations = self.evaluator.evaluate_batch(
            subjects(batch, self.cause, waivers, rows=evaluable),
            evaluated_at=now,
            hardware=batch.hardware,
        )
        max_age = self.evaluator.matrix.document.get("evidence_max_age_days")
        for row, evaluation in zip(evaluable, evaluations, strict=True):
            row_waivers = waivers.get(row.key, ())
            latest = row.latest_decision_id
            if _differs(evaluation.decision, row.previous):
                decisions.append(
                    DecisionWrite(
                        decision=evaluation.decision,
                        policy_input=evaluation.policy_input.canonical.decode(),
                        expected=TrackedHead(
                            content_digest=row.content_digest, latest_decision_id=latest
                        ),
                    )
                )
                latest = evaluation.decision.id
                keys[row.key] = self._key(batch, row, row_waivers, latest)
            else:
                unchanged.append(row.key)
            memos[row.key] = SweepMemo(
                kind=row.kind,
                name=row.name,
                key=keys[row.key],
                stable_until=stable_until(
                    row.content or {}, evaluated_at=now, max_age_days=max_age, waivers=row_waivers
                ),
            )
        failed = len(to_evaluate) - len(evaluable)
        progress = SweepProgress(
            sweep_id=self.sweep_id,
            cursor=batch.last_key,
            evaluated=len(batch.rows) - failed,
            failed=failed,
            unchanged=unchanged,
            touched_at=now,
            memos=list(memos.values()),
        )
        return Batch(decisions=decisions, sweep=progress), len(held)

    def _key(
        self,
        batch: TrackedBatch,
        row: TrackedRow,
        waivers: Sequence[Mapping[str, Any]],
        latest_decision_id: str | None,
    ) -> str:
        pool = batch.pools.get(row.hardware_ref) if row.hardware_ref is not None else None
        return memo_key(
            content_digest=row.content_digest,
            pool_digest=None if pool is None else pool.content_digest,
            matrix_key=self.evaluator.matrix.key,
            policy_revision=self.evaluator.engine.policy_revision,
            waivers=waivers,
            latest_decision_id=latest_decision_id,
        )


def _differs(decision: Decision, previous: tuple[Any, ...] | None) -> bool:
    if previous is None:
        return True
    verdict, matrix_version, policy_revision, violations = previous
    if (verdict, matrix_version, policy_revision) != (
        decision.verdict,
        decision.matrix_version,
        decision.policy_revision,
    ):
        return True
    found = sorted((v.rule, v.severity, v.path, v.waiver_id) for v in decision.violations)
    try:
        stored = sorted(
            (v["rule"], v["severity"], v["path"], v.get("waiver_id")) for v in violations or ()
        )
    except (AttributeError, KeyError, TypeError):  # a stored document not as this one writes
        return True
    return found != stored
