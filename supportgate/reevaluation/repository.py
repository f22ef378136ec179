"""Reads of the sweeps rows (supportgate/ledger/sweeps.py writes them and sweep_memos)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlmodel import Session

from supportgate.db import Decision, Manifest, Sweep, table_of

_sweeps = table_of(Sweep)
_manifests = table_of(Manifest)
_decisions = table_of(Decision)

UNFINISHED = ("queued", "running")


def sweep(session: Session, sweep_id: str, *, lock: bool = False) -> Sweep | None:
    statement = select(Sweep).where(_sweeps.c.id == sweep_id)
    if lock:
        statement = statement.with_for_update()
    return session.execute(statement.execution_options(populate_existing=True)).scalar_one_or_none()


def next_unfinished(session: Session, policy_revision: str) -> str | None:
    """A sweep pinned to another policy revision is left to a replica on those policies."""
    statement = (
        select(_sweeps.c.id)
        .where(
            _sweeps.c.status.in_(UNFINISHED),
            _sweeps.c.policy_revision.is_(None) | (_sweeps.c.policy_revision == policy_revision),
        )
        .order_by(_sweeps.c.requested_at, _sweeps.c.id)
        .limit(1)
    )
    found = session.execute(statement).scalar_one_or_none()
    return None if found is None else str(found)


def latest_trigger(session: Session, prefix: str) -> str | None:
    """The greatest trigger starting with `prefix` (for `schedule:` ones, the latest instant:
    they are UTC times written alike)."""
    statement = select(func.max(_sweeps.c.trigger)).where(_sweeps.c.trigger.startswith(prefix))
    found = session.execute(statement).scalar_one_or_none()
    return None if found is None else str(found)


def latest_finished(session: Session) -> Sweep | None:
    statement = (
        select(Sweep)
        .where(_sweeps.c.status == "finished")
        .order_by(_sweeps.c.finished_at.desc())
        .limit(1)
    )
    return session.execute(statement).scalar_one_or_none()


def judged_elsewhere(
    session: Session, *, matrix_version: str, policy_revision: str
) -> tuple[bool, bool]:
    joined = _manifests.join(_decisions, _decisions.c.id == _manifests.c.latest_decision_id)
    other_matrix = session.execute(
        select(_manifests.c.name)
        .select_from(joined)
        .where(_decisions.c.matrix_version != matrix_version)
        .limit(1)
    ).first()
    other_policy = session.execute(
        select(_manifests.c.name)
        .select_from(joined)
        .where(_decisions.c.policy_revision != policy_revision)
        .limit(1)
    ).first()
    return other_matrix is not None, other_policy is not None
