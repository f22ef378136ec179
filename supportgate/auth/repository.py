"""api_keys rows: the one module that reads and writes them."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from supportgate.db import ApiKey, table_of
from supportgate.errors import ConflictError

_keys = table_of(ApiKey)


def insert_key(session: Session, row: ApiKey) -> None:
    session.add(row)
    try:
        session.flush()
    except IntegrityError as exc:
        conflict = f"an API key named {row.name!r} already exists"
        raise ConflictError(conflict, field="$.name") from exc


def any_key(session: Session) -> bool:
    return session.execute(select(_keys.c.id).limit(1)).first() is not None


def all_keys(session: Session) -> list[ApiKey]:
    return list(session.execute(select(ApiKey).order_by(_keys.c.name)).scalars())


def unrevoked_keys(session: Session) -> list[ApiKey]:
    """The keys not revoked (expired ones too: expiry is a time the reader compares)."""
    statement = select(ApiKey).where(_keys.c.revoked_at.is_(None))
    return list(session.execute(statement).scalars())


def revoke(session: Session, name: str, now: datetime) -> ApiKey | None:
    """A key revoked already keeps its first time; None when no key has that name."""
    session.execute(
        update(_keys)
        .where(_keys.c.name == name, _keys.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return session.execute(select(ApiKey).where(_keys.c.name == name)).scalars().first()


def record_last_used(session: Session, used: Mapping[int, datetime]) -> None:
    """Never moving last_used_at back: one executemany."""
    if not used:
        return
    statement = (
        update(_keys)
        .where(
            _keys.c.id == bindparam("key_id"),
            (_keys.c.last_used_at.is_(None)) | (_keys.c.last_used_at < bindparam("at")),
        )
        .values(last_used_at=bindparam("at"))
    )
    session.connection().execute(
        statement, [{"key_id": key_id, "at": at} for key_id, at in used.items()]
    )
