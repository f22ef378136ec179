"""Reading the fleet "as of T" is an index read on both databases: the plans name the indexes."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Engine, text

from supportgate.fleet.query import decisions_in_force, matrix_in_force


def _plan(engine: Engine, statement: object) -> str:
    compiled = statement.compile(engine, compile_kwargs={"literal_binds": True})  # type: ignore[attr-defined]
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            rows = connection.execute(text(f"EXPLAIN QUERY PLAN {compiled}")).all()
            return "\n".join(str(row[-1]) for row in rows)
        # An empty table is read fastest without an index: ask whether the index can serve.
        connection.execute(text("SET enable_seqscan = off"))
        return "\n".join(row[0] for row in connection.execute(text(f"EXPLAIN {compiled}")))


def test_the_spans_open_at_a_date_are_read_by_their_index(migrated_db: Engine) -> None:
    plan = _plan(migrated_db, decisions_in_force(datetime(2026, 1, 1, tzinfo=UTC)))
    assert "ix_tracked_spans_valid" in plan


def test_the_matrix_in_force_at_a_date_is_read_by_its_index(migrated_db: Engine) -> None:
    plan = _plan(migrated_db, matrix_in_force(datetime(2026, 1, 1, tzinfo=UTC)))
    assert "ix_matrix_versions_in_force" in plan
