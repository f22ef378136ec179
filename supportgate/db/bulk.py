from __future__ import annotations

from typing import Any

from sqlalchemy import Table, insert
from sqlmodel import Session

from .engine import json_text


def append_rows(session: Session, table: Table, rows: list[dict[str, Any]]) -> None:
    """Insert rows (all with the same keys): COPY on PostgreSQL, executemany elsewhere. COPY
    saves a fifth of a committed decision's CPU (docs/performance.md, Speed devices);
    executemany is its oracle (tests/db/test_db_devices.py)."""
    if not rows:
        return
    dialect = session.get_bind().dialect
    if dialect.name != "postgresql":
        session.execute(insert(table), rows)
        return
    columns = list(rows[0])
    json_columns = {name for name in columns if isinstance(rows[0][name], dict | list)}
    quoted = ", ".join(dialect.identifier_preparer.quote(name) for name in columns)
    cursor = session.connection().connection.driver_connection.cursor()  # type: ignore[union-attr]
    with cursor.copy(f"COPY {table.name} ({quoted}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row([json_text(row[c]) if c in json_columns else row[c] for c in columns])
