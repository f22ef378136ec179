"""The decisions' rows (`decisions`, `decision_rules`) and the Idempotency-Key answers
(`idempotency_keys`): the one module that writes them, in the ledger's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import func, insert, select
from sqlmodel import Session

from supportgate.db import Decision as DecisionRow
from supportgate.db import DecisionRule, IdempotencyKey, table_of
from supportgate.db.bulk import append_rows
from supportgate.manifests.decision import Decision

from .batches import DecisionWrite, IdempotentAnswer
from .rows import COPIED

_decisions = table_of(DecisionRow)
_rules = table_of(DecisionRule)
_idempotency = table_of(IdempotencyKey)
_LAST_SEQ = select(func.max(_decisions.c.seq))


def insert_decisions(
    session: Session, writes: Sequence[DecisionWrite], leaves: Sequence[int], now: datetime
) -> None:
    if not writes:
        return
    # under the head lock, no other writer appends meanwhile
    seq = int(session.execute(_LAST_SEQ).scalar_one() or 0)
    decision_rows: list[dict[str, Any]] = []
    rule_rows: list[dict[str, Any]] = []
    for write, leaf_index in zip(writes, leaves, strict=True):
        seq += 1
        decision_rows.append(_decision_row(write, seq, leaf_index, now))
        rule_rows.extend(
            {"decision_seq": seq, "rule": rule, "severity": severity}
            for rule, severity in sorted({(v.rule, v.severity) for v in write.decision.violations})
        )
    append_rows(session, _decisions, decision_rows)
    append_rows(session, _rules, rule_rows)


_body_encoder = msgspec.json.Encoder()
_DOCUMENT = ("violations", "claims", "checklist", "recommendations")


def decision_body(decision: Decision, leaf_index: int) -> bytes:
    """The decision as POST /v1/evaluations answers it, and as its Idempotency-Key replays
    it: with the leaf_index of its entry."""
    return _body_encoder.encode(msgspec.structs.replace(decision, leaf_index=leaf_index))


def store_answers(
    session: Session, answers: Sequence[tuple[IdempotentAnswer, bytes]], now: datetime
) -> None:
    """Each answer with its body. A second answer for one (API key, Idempotency-Key) fails
    the primary key: the writer then writes the group's decisions one by one, so that only
    that one fails."""
    if answers:
        session.execute(
            insert(_idempotency),
            [
                {
                    "api_key_id": answer.api_key_id,
                    "key": answer.key,
                    "request_digest": answer.request_digest,
                    "status_code": answer.status_code,
                    "response_body": body,
                    "created_at": now,
                }
                for answer, body in answers
            ],
        )


def _decision_row(write: DecisionWrite, seq: int, leaf_index: int, now: datetime) -> dict[str, Any]:
    decision = write.decision
    document = msgspec.to_builtins({field: getattr(decision, field) for field in _DOCUMENT})
    return {
        **{column: getattr(decision, column) for column in COPIED},
        "seq": seq,
        "kind": decision.manifest.kind,
        "name": decision.manifest.name,
        "document": document,
        "recorded_at": now,
        "policy_input": write.policy_input,
        "leaf_index": leaf_index,
    }
