"""sweeps and sweep_memos rows, and the tracked-manifest writes a sweep makes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Table, bindparam, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from supportgate.db import Decision, Manifest, Sweep, SweepMemo
from supportgate.db.keys import in_keys, one_of

from .source import Key

_sweeps: Table = Sweep.__table__  # type: ignore[attr-defined]
_memos: Table = SweepMemo.__table__  # type: ignore[attr-defined]
_manifests: Table = Manifest.__table__  # type: ignore[attr-defined]
_decisions: Table = Decision.__table__  # type: ignore[attr-defined]

UNFINISHED = ("queued", "running")


def _insert(session: Session) -> Any:
    dialect = session.get_bind().dialect.name
    return postgresql.insert if dialect == "postgresql" else sqlite.insert


def _unnest(rows: list[dict[str, Any]], **columns: str) -> tuple[str, dict[str, list[Any]]]:
    """PostgreSQL's `unnest(CAST(:k AS type[]), ...)` over the rows, one array per column (key
    -> SQL type, in order), and its parameters: a whole batch in one statement."""
    arrays = ", ".join(f"CAST(:{key} AS {sql_type}[])" for key, sql_type in columns.items())
    return f"unnest({arrays})", {key: [row[key] for row in rows] for key in columns}


def insert_sweep(session: Session, values: dict[str, Any]) -> str:
    """The id of the sweep for values["trigger"]: this one, or the one already there."""
    statement = _insert(session)(_sweeps).values(**values)
    session.execute(statement.on_conflict_do_nothing(index_elements=["trigger"]))
    found = session.execute(
        select(_sweeps.c.id).where(_sweeps.c.trigger == values["trigger"])
    ).scalar_one()
    return str(found)


def sweep(session: Session, sweep_id: str, *, lock: bool = False) -> Sweep | None:
    statement = select(Sweep).where(_sweeps.c.id == sweep_id)
    if lock:
        statement = statement.with_for_update()
    return session.execute(statement.execution_options(populate_existing=True)).scalar_one_or_none()


def next_unfinished(session: Session, policy_revision: str) -> str | None:
    """The oldest unfinished sweep a process with these policies may run: one not yet pinned
    to a policy revision, or pinned to this one (a replica on other policies leaves it)."""
    statement = (
        select(_sweeps.c.id)
        .where(
            _sweeps.c.status.in_(UNFINISHED),
            _sweeps.c.policy_revision.is_(None) | (_sweeps.c.policy_revision == policy_revision),
        )
        .order_by(_sweeps.c.requested_at, _sweeps.c.id)
        .limit(1)
    )
    found = session.execute(statement).scalar_one_or_none()
    return None if found is None else str(found)


def update_sweep(session: Session, sweep_id: str, **values: Any) -> None:
    session.execute(update(_sweeps).where(_sweeps.c.id == sweep_id).values(**values))


def advance_sweep(
    session: Session, sweep_id: str, *, cursor: Key, evaluated: int, changed: int, failed: int
) -> None:
    """Move the cursor past a committed batch and add its counts (in the batch's transaction)."""
    session.execute(
        update(_sweeps)
        .where(_sweeps.c.id == sweep_id)
        .values(
            cursor_kind=cursor[0],
            cursor_name=cursor[1],
            evaluated=_sweeps.c.evaluated + evaluated,
            changed=_sweeps.c.changed + changed,
            failed=_sweeps.c.failed + failed,
        )
    )


def latest_finished(session: Session) -> Sweep | None:
    statement = (
        select(Sweep)
        .where(_sweeps.c.status == "finished")
        .order_by(_sweeps.c.finished_at.desc())
        .limit(1)
    )
    return session.execute(statement).scalar_one_or_none()


def judged_elsewhere(
    session: Session, *, matrix_version: str, policy_revision: str
) -> tuple[bool, bool]:
    """Whether some tracked manifest's latest decision was made under another matrix version,
    and whether under another policy revision."""
    joined = _manifests.join(_decisions, _decisions.c.id == _manifests.c.latest_decision_id)
    other_matrix = session.execute(
        select(_manifests.c.name)
        .select_from(joined)
        .where(_decisions.c.matrix_version != matrix_version)
        .limit(1)
    ).first()
    other_policy = session.execute(
        select(_manifests.c.name)
        .select_from(joined)
        .where(_decisions.c.policy_revision != policy_revision)
        .limit(1)
    ).first()
    return other_matrix is not None, other_policy is not None


def memos(session: Session, keys: Sequence[Key]) -> dict[Key, tuple[str, datetime | None]]:
    if not keys:
        return {}
    statement = select(_memos.c.kind, _memos.c.name, _memos.c.key, _memos.c.stable_until).where(
        in_keys(session, _memos, keys)
    )
    return {(kind, name): (key, until) for kind, name, key, until in session.execute(statement)}


def previous_decisions(
    session: Session, ids: Sequence[str], *, matrix_version: str, policy_revision: str
) -> dict[str, tuple[str, str, str, Any]]:
    """id -> (verdict, matrix_version, policy_revision, violations) of these decisions; the
    violations (a list, from the stored document) only of those judged under this matrix
    version and policy revision (the others differ anyway), else None."""
    if not ids:
        return {}
    statement = select(
        _decisions.c.id,
        _decisions.c.verdict,
        _decisions.c.matrix_version,
        _decisions.c.policy_revision,
    ).where(one_of(session, _decisions.c.id, ids))
    found = {row[0]: (row[1], row[2], row[3], None) for row in session.execute(statement)}
    same = [
        key
        for key, (_, version, revision, _) in found.items()
        if (version, revision) == (matrix_version, policy_revision)
    ]
    if same:
        violations = select(_decisions.c.id, _decisions.c.document["violations"]).where(
            one_of(session, _decisions.c.id, same)
        )
        for decision_id, listed in session.execute(violations):
            verdict, version, revision, _ = found[decision_id]
            found[decision_id] = (verdict, version, revision, listed)
    return found


def current_heads(session: Session, keys: Sequence[Key]) -> dict[Key, tuple[str, str | None]]:
    """(kind, name) -> (content_digest, latest_decision_id) of the tracked ones among keys."""
    if not keys:
        return {}
    statement = select(
        _manifests.c.kind,
        _manifests.c.name,
        _manifests.c.content_digest,
        _manifests.c.latest_decision_id,
    ).where(in_keys(session, _manifests, keys))
    return {(k, n): (digest, latest) for k, n, digest, latest in session.execute(statement)}


def move_latest(session: Session, rows: list[dict[str, Any]]) -> None:
    """Point tracked manifests at their new decisions (the content stays as it is): one
    UPDATE ... FROM unnest(arrays) on PostgreSQL, an executemany elsewhere."""
    if not rows:
        return
    if session.get_bind().dialect.name == "postgresql":
        arrays, params = _unnest(
            rows, k="text", n="text", decision_id="text", verdict="text", at="timestamptz"
        )
        session.execute(
            text(  # only _unnest's casts are formatted in: every value is a bound parameter
                "UPDATE manifests AS m SET latest_decision_id = v.decision_id,"  # noqa: S608
                " latest_verdict = v.verdict, last_evaluated_at = v.at"
                f" FROM {arrays} AS v(k, n, decision_id, verdict, at)"
                " WHERE m.kind = v.k AND m.name = v.n"
            ),
            params,
        )
        return
    statement = (
        update(_manifests)
        .where(_manifests.c.kind == bindparam("k"), _manifests.c.name == bindparam("n"))
        .values(
            latest_decision_id=bindparam("decision_id"),
            latest_verdict=bindparam("verdict"),
            last_evaluated_at=bindparam("at"),
        )
    )
    session.connection().execute(statement, rows)


def touch(session: Session, keys: Sequence[Key], at: datetime) -> None:
    """One UPDATE of last_evaluated_at for a batch of manifests judged unchanged."""
    if keys:
        touched = update(_manifests).where(in_keys(session, _manifests, keys))
        session.execute(touched.values(last_evaluated_at=at))


def save_memos(session: Session, rows: list[dict[str, Any]]) -> None:
    """Upsert the memos: one INSERT ... SELECT unnest(arrays) on PostgreSQL."""
    if not rows:
        return
    if session.get_bind().dialect.name == "postgresql":
        arrays, params = _unnest(
            rows, kind="text", name="text", key="text", stable_until="timestamptz"
        )
        session.execute(
            text(  # only _unnest's casts are formatted in: every value is a bound parameter
                "INSERT INTO sweep_memos (kind, name, key, stable_until)"  # noqa: S608
                f" SELECT * FROM {arrays}"
                " ON CONFLICT (kind, name) DO UPDATE"
                " SET key = excluded.key, stable_until = excluded.stable_until"
            ),
            params,
        )
        return
    statement = _insert(session)(_memos)
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["kind", "name"],
            set_={"key": statement.excluded.key, "stable_until": statement.excluded.stable_until},
        ),
        rows,
    )
