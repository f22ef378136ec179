"""Reads of tracked manifests, their decisions, and stored idempotent responses (the ledger
writes them: supportgate/ledger/)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import exists, select
from sqlmodel import Session

from supportgate.db import Decision, DecisionRule, IdempotencyKey, Manifest, table_of

_manifests = table_of(Manifest)
_decisions = table_of(Decision)
_rules = table_of(DecisionRule)


def tracked(session: Session, kind: str, name: str) -> Manifest | None:
    return session.get(Manifest, (kind, name))


def tracked_page(
    session: Session,
    *,
    kind: str | None,
    verdict: str | None,
    owner: str | None,
    after: tuple[str, str] | None,
    limit: int,
    rule: str | None = None,
    hardware_ref: str | None = None,
) -> Sequence[Manifest]:
    """`rule`: those whose latest decision has a violation of it (any severity)."""
    statement = select(Manifest)
    if hardware_ref is not None:
        statement = statement.where(_manifests.c.hardware_ref == hardware_ref)
    if rule is not None:
        statement = statement.where(
            exists().where(
                _decisions.c.id == _manifests.c.latest_decision_id,
                _rules.c.decision_seq == _decisions.c.seq,
                _rules.c.rule == rule,
            )
        )
    if kind is not None:
        statement = statement.where(_manifests.c.kind == kind)
    if verdict is not None:
        statement = statement.where(_manifests.c.latest_verdict == verdict)
    if owner is not None:
        statement = statement.where(_manifests.c.owner == owner)
    if after is not None:
        statement = statement.where(
            (_manifests.c.kind > after[0])
            | ((_manifests.c.kind == after[0]) & (_manifests.c.name > after[1]))
        )
    statement = statement.order_by(_manifests.c.kind, _manifests.c.name).limit(limit)
    return session.execute(statement).scalars().all()


def decisions_by_id(session: Session, ids: Sequence[str]) -> dict[str, Decision]:
    if not ids:
        return {}
    rows = session.execute(select(Decision).where(_decisions.c.id.in_(ids))).scalars().all()
    return {row.id: row for row in rows}


def history_page(
    session: Session, kind: str, name: str, *, before_seq: int | None, limit: int
) -> Sequence[Decision]:
    statement = select(Decision).where(_decisions.c.kind == kind, _decisions.c.name == name)
    if before_seq is not None:
        statement = statement.where(_decisions.c.seq < before_seq)
    statement = statement.order_by(_decisions.c.seq.desc()).limit(limit)
    return session.execute(statement).scalars().all()


def stored_response(session: Session, api_key_id: int, key: str) -> IdempotencyKey | None:
    return session.get(IdempotencyKey, (api_key_id, key))
