"""Column types that read and write the same Python values on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, DateTime, Integer
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

#: A JSON document: `jsonb` on PostgreSQL, JSON text on SQLite.
JSONDocument: TypeEngine[Any] = JSON().with_variant(JSONB(), "postgresql")

#: A 64-bit surrogate key. SQLite only auto-numbers a column declared exactly
#: `INTEGER PRIMARY KEY` (its rowid, 64-bit anyway), so it gets `INTEGER` there.
BigKey: TypeEngine[int] = BigInteger().with_variant(Integer(), "sqlite")


class UTCDateTime(TypeDecorator[datetime]):
    """`timestamptz` on PostgreSQL, text on SQLite; aware UTC datetimes both ways. A naive
    datetime is refused rather than guessed at: it names no instant."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value.isoformat()} given: attach a timezone")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    @property
    def python_type(self) -> type[datetime]:
        return datetime
