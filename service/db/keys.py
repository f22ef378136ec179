"""A WHERE clause for a set of (kind, name) keys, on any table keyed by them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Table, and_, or_


def in_keys(table: Table, keys: Iterable[tuple[str, str]]) -> Any:
    """`(kind = k1 AND name IN (...)) OR ...`: one IN list per kind, which both SQLite and
    PostgreSQL answer from the (kind, name) primary key."""
    by_kind: dict[str, set[str]] = {}
    for kind, name in keys:
        by_kind.setdefault(kind, set()).add(name)
    return or_(
        *(
            and_(table.c.kind == kind, table.c.name.in_(sorted(names)))
            for kind, names in sorted(by_kind.items())
        )
    )
