"""api_keys rows."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from supportgate.db import ApiKey
from supportgate.errors import UsageError

from .roles import Role


def insert_key(
    session: Session, *, name: str, role: Role, key_hash: str, prefix: str, now: datetime
) -> ApiKey:
    row = ApiKey(name=name, role=role, key_hash=key_hash, prefix=prefix, created_at=now)
    session.add(row)
    try:
        session.flush()
    except IntegrityError as exc:
        raise UsageError(f"an API key named {name!r} already exists", field="name") from exc
    return row


def any_key(session: Session) -> bool:
    return session.execute(select(ApiKey.__table__.c.id).limit(1)).first() is not None  # type: ignore[attr-defined]


def find_active_by_hash(session: Session, key_hash: str) -> ApiKey | None:
    table = ApiKey.__table__  # type: ignore[attr-defined]
    statement = select(ApiKey).where(table.c.key_hash == key_hash, table.c.revoked_at.is_(None))
    return session.execute(statement).scalars().first()


def find_active_by_id(session: Session, key_id: int) -> ApiKey | None:
    table = ApiKey.__table__  # type: ignore[attr-defined]
    statement = select(ApiKey).where(table.c.id == key_id, table.c.revoked_at.is_(None))
    return session.execute(statement).scalars().first()
