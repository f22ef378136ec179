"""WHERE clauses for a set of values: `one_of(session, column, values)` and, on any table keyed
by (kind, name), `in_keys(session, table, keys)`.

On PostgreSQL each list is ONE array parameter (`column = ANY(:values)`): the statement's text
and parameter count stay the same however many values there are. An IN list of N values is N
parameters, and psycopg parses (in Python) every statement of over 50 parameters afresh; sweeps
send such lists of 500 keys several times per batch. Both forms are answered from the index.
Elsewhere (SQLite) an IN list.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import ARRAY, Column, Table, and_, any_, bindparam, or_
from sqlmodel import Session


def one_of(session: Session, column: Column[Any], values: Iterable[Any]) -> Any:
    chosen = sorted(set(values))
    if session.get_bind().dialect.name == "postgresql":
        return column == any_(bindparam(None, chosen, type_=ARRAY(column.type)))
    return column.in_(chosen)


def in_keys(session: Session, table: Table, keys: Iterable[tuple[str, str]]) -> Any:
    """`(kind = k1 AND name IN (...)) OR ...`: one list of names per kind, which both SQLite
    and PostgreSQL answer from the (kind, name) primary key."""
    by_kind: dict[str, set[str]] = {}
    for kind, name in keys:
        by_kind.setdefault(kind, set()).add(name)
    return or_(
        *(
            and_(table.c.kind == kind, one_of(session, table.c.name, names))
            for kind, names in sorted(by_kind.items())
        )
    )
