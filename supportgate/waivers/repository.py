from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from sqlalchemy import func, select
from sqlmodel import Session

from supportgate.db import Manifest, Waiver, table_of
from supportgate.db.keys import one_of

_waivers = table_of(Waiver)
_manifests = table_of(Manifest)


def by_id(session: Session, waiver_id: str) -> Waiver | None:
    statement = select(Waiver).where(_waivers.c.id == waiver_id)
    return session.execute(statement).scalars().one_or_none()


def active(
    session: Session, at: datetime, *, names: Collection[str] | None = None
) -> Sequence[Waiver]:
    statement = select(Waiver).where(_waivers.c.deleted_at.is_(None), _waivers.c.expires_at > at)
    if names is not None:
        statement = statement.where(one_of(_waivers.c.name, names))
    return session.execute(statement.order_by(_waivers.c.id)).scalars().all()


def next_expiry(session: Session, after: datetime) -> datetime | None:
    statement = select(func.min(_waivers.c.expires_at)).where(
        _waivers.c.deleted_at.is_(None), _waivers.c.expires_at > after
    )
    found: datetime | None = session.execute(statement).scalar_one_or_none()
    return found


def expired_unjudged(session: Session, now: datetime) -> list[tuple[str, str, datetime]]:
    """(kind, name, expires_at) of the waivers not deleted that expired by `now` on a tracked
    manifest last judged before the expiry: a judgement that may still hold the waiver."""
    judged = _manifests.c.last_evaluated_at
    statement = select(_waivers.c.kind, _waivers.c.name, _waivers.c.expires_at).join(
        _manifests, (_manifests.c.kind == _waivers.c.kind) & (_manifests.c.name == _waivers.c.name)
    )
    statement = statement.where(
        _waivers.c.deleted_at.is_(None),
        _waivers.c.expires_at <= now,
        judged.is_(None) | (judged < _waivers.c.expires_at),
    )
    return [(kind, name, at) for kind, name, at in session.execute(statement)]


def page(
    session: Session,
    *,
    kind: str | None,
    name: str | None,
    rule: str | None,
    active: bool | None,
    now: datetime,
    before_seq: int | None,
    limit: int,
) -> Sequence[Waiver]:
    """Waivers newest first, older than the cursor; `active`: only those in force `now`
    (True), or only those deleted or expired by then (False)."""
    statement = select(Waiver)
    for column, value in (("kind", kind), ("name", name), ("rule", rule)):
        if value is not None:
            statement = statement.where(_waivers.c[column] == value)
    in_force = _waivers.c.deleted_at.is_(None) & (_waivers.c.expires_at > now)
    if active is not None:
        statement = statement.where(in_force if active else ~in_force)
    if before_seq is not None:
        statement = statement.where(_waivers.c.seq < before_seq)
    statement = statement.order_by(_waivers.c.seq.desc()).limit(limit)
    return session.execute(statement).scalars().all()
