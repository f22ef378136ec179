"""WHERE clauses for a set of values: an IN list on both databases (one array parameter on
PostgreSQL bought under the 15% a speed device must: docs/performance.md, Speed devices).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Column, Table, and_, bindparam, or_


def one_of(column: Column[Any], values: Iterable[Any]) -> Any:
    return column.in_(listed(None, sorted(set(values)), column.type))


def listed(name: str | None, values: Any = None, type_: Any = None) -> Any:
    """A list of values written into the statement by its type's literal form (named: given
    when the statement runs): bound, a batch's 1,000 cost SQLAlchemy and psycopg (which parses
    afresh every query of over 50 parameters) 4 ms of CPU a statement more
    (docs/performance.md, session 31)."""
    return bindparam(name, values, type_, expanding=True, literal_execute=True)


def in_keys(table: Table, keys: Iterable[tuple[str, str]]) -> Any:
    """`(kind = k1 AND name IN (...)) OR ...`: one list of names per kind, which both SQLite
    and PostgreSQL answer from the (kind, name) primary key."""
    by_kind: dict[str, set[str]] = {}
    for kind, name in keys:
        by_kind.setdefault(kind, set()).add(name)
    return or_(
        *(
            and_(table.c.kind == kind, one_of(table.c.name, names))
            for kind, names in sorted(by_kind.items())
        )
    )
