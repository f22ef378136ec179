"""The tracked manifests (`manifests` table): the one module that writes them.

A tracked manifest is the state the log leads to: the latest content submitted under a
(kind, name) and its latest decision. Every write happens in the ledger's transaction
(write.apply_batch), under the log's head lock:

    track            a submission: the content and its decision (insert or replace)
    move_latest      a sweep's decision: the latest decision moves, the content stays
    stamp_evaluated  a sweep found the manifest unchanged: last_evaluated_at moves
    untrack          the manifest is no longer tracked (its decisions stay in the log)

and one repair outside the writer, also under the head lock: `supportgate audit
rebuild-tracking` (supportgate/audit/rebuild.py) puts back the rows the log leads to
(`insert_row`, `replace_row`, `untrack`).

Reads for pages and views live with their domains (supportgate/evaluations/repository.py);
`heads`, `owners` and `is_tracked` are the reads the writer itself needs under the lock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Table, bindparam, delete, insert, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from supportgate.db import Manifest
from supportgate.db.bulk import unnest
from supportgate.db.keys import in_keys
from supportgate.manifests.decision import Decision

from .batches import DecisionWrite, Key, TrackedHead

_manifests: Table = Manifest.__table__  # type: ignore[attr-defined]

_REPLACED_COLUMNS = (
    "owner",
    "content",
    "content_digest",
    "hardware_ref",
    "latest_decision_id",
    "latest_verdict",
    "updated_at",
    "last_evaluated_at",
)


def track(session: Session, writes: Sequence[DecisionWrite], now: datetime) -> None:
    """Track each write's content with its decision (the last write of a (kind, name) wins):
    INSERT ... ON CONFLICT (kind, name) DO UPDATE, run once with every row (an executemany:
    compiled once and cached, unlike a multi-VALUES statement of varying size)."""
    rows = {write.key: _tracked_row(write, now) for write in writes if write.tracking}
    if not rows:
        return
    dialect_insert = postgresql.insert if _dialect(session) == "postgresql" else sqlite.insert
    statement = dialect_insert(_manifests)
    upsert = statement.on_conflict_do_update(
        index_elements=["kind", "name"],
        set_={column: statement.excluded[column] for column in _REPLACED_COLUMNS},
    )
    session.execute(upsert, list(rows.values()))


def move_latest(session: Session, decisions: Sequence[Decision]) -> None:
    """Point tracked manifests at their new decisions (the content stays as it is): one
    UPDATE ... FROM unnest(arrays) on PostgreSQL, an executemany elsewhere."""
    if not decisions:
        return
    rows = [
        {
            "k": decision.manifest.kind,
            "n": decision.manifest.name,
            "decision_id": decision.id,
            "verdict": decision.verdict,
            "at": decision.evaluated_at,
        }
        for decision in decisions
    ]
    if _dialect(session) == "postgresql":
        arrays, params = unnest(
            rows, k="text", n="text", decision_id="text", verdict="text", at="timestamptz"
        )
        session.execute(
            text(  # only unnest's casts are formatted in: every value is a bound parameter
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


def stamp_evaluated(session: Session, keys: Sequence[Key], at: datetime) -> None:
    """One UPDATE of last_evaluated_at for manifests a sweep judged unchanged."""
    if keys:
        stamped = update(_manifests).where(in_keys(session, _manifests, keys))
        session.execute(stamped.values(last_evaluated_at=at))


def untrack(session: Session, kind: str, name: str) -> bool:
    """Stop tracking (kind, name); False when it was not tracked."""
    result = session.execute(
        delete(_manifests).where(_manifests.c.kind == kind, _manifests.c.name == name)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def insert_row(session: Session, values: Mapping[str, Any]) -> None:
    """A tracked manifest's whole row, as the log leads to it (rebuild-tracking)."""
    session.execute(insert(_manifests).values(dict(values)))


def replace_row(session: Session, values: Mapping[str, Any]) -> None:
    """Replace the row of (values["kind"], values["name"]) with `values` (rebuild-tracking)."""
    where = (_manifests.c.kind == values["kind"]) & (_manifests.c.name == values["name"])
    session.execute(update(_manifests).where(where).values(dict(values)))


def heads(session: Session, keys: Sequence[Key]) -> dict[Key, TrackedHead]:
    """Where each tracked manifest among `keys` stands (untracked ones are absent)."""
    if not keys:
        return {}
    statement = select(
        _manifests.c.kind,
        _manifests.c.name,
        _manifests.c.content_digest,
        _manifests.c.latest_decision_id,
    ).where(in_keys(session, _manifests, keys))
    return {
        (kind, name): TrackedHead(content_digest=digest, latest_decision_id=latest)
        for kind, name, digest, latest in session.execute(statement)
    }


def owners(session: Session, keys: Sequence[Key]) -> dict[Key, str | None]:
    """The owner of each tracked manifest among `keys` (untracked ones are absent)."""
    if not keys:
        return {}
    statement = select(_manifests.c.kind, _manifests.c.name, _manifests.c.owner).where(
        in_keys(session, _manifests, keys)
    )
    return {(kind, name): owner for kind, name, owner in session.execute(statement)}


def is_tracked(session: Session, kind: str, name: str) -> bool:
    statement = select(_manifests.c.kind).where(
        _manifests.c.kind == kind, _manifests.c.name == name
    )
    return session.execute(statement).first() is not None


def _tracked_row(write: DecisionWrite, now: datetime) -> dict[str, Any]:
    decision, tracking = write.decision, write.tracking
    assert tracking is not None  # noqa: S101 - only called for writes that track
    return {
        "kind": decision.manifest.kind,
        "name": decision.manifest.name,
        "owner": tracking.owner,
        "content": tracking.content,
        "content_digest": tracking.content_digest,
        "hardware_ref": tracking.hardware_ref,
        "latest_decision_id": decision.id,
        "latest_verdict": decision.verdict,
        "created_at": now,
        "updated_at": now,
        "last_evaluated_at": decision.evaluated_at,
    }


def _dialect(session: Session) -> str:
    return session.get_bind().dialect.name
