"""`db/keys.py`: value lists written into the statement as literals (psycopg parses afresh a
query of over 50 parameters; docs/performance.md, session 31) select what bound values did."""

from __future__ import annotations

from sqlalchemy import Column, Engine, Integer, MetaData, Table, Text, insert, select

from supportgate.db.keys import in_keys, one_of

_metadata = MetaData()
_table = Table(
    "listed",
    _metadata,
    Column("kind", Text, primary_key=True),
    Column("name", Text, primary_key=True),
    Column("n", Integer, nullable=False),
)
# Quotes, a backslash, placeholders of both drivers' styles, a comment marker.
_NAMES = ["plain", "o'k", "a''b", "back\\slash", "ünï 🙂", "%(x)s", "%s", "?", "-- c", ""]


def test_value_lists_select_by_literals(migrated_db: Engine) -> None:
    _metadata.create_all(migrated_db)
    rows = [{"kind": kind, "name": name, "n": n} for n, name in enumerate(_NAMES) for kind in "AB"]
    keys = [("A", name) for name in _NAMES] + [("B", "o'k")]
    with migrated_db.begin() as connection:
        connection.execute(insert(_table), rows)
        named = select(_table.c.kind, _table.c.name).where(in_keys(_table, keys))
        found = connection.execute(named).all()
        numbered = select(_table.c.name).where(one_of(_table.c.n, [1, 3, 3]), _table.c.kind == "A")
        by_number = connection.execute(numbered).scalars().all()
        nothing = select(_table.c.name).where(one_of(_table.c.n, []))
        assert connection.execute(nothing).all() == []
    assert sorted(found) == sorted(keys)
    assert sorted(by_number) == sorted([_NAMES[1], _NAMES[3]])
    compiled = named.compile(migrated_db, compile_kwargs={"render_postcompile": True})
    assert len(compiled.params) == 2  # the two kinds; no parameter a name
