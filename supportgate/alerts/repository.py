"""alerts rows, and the verdicts tracked manifests hold before a write changes them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import exists, select
from sqlmodel import Session

from supportgate.db import Alert, Manifest, table_of
from supportgate.db import Decision as DecisionRow
from supportgate.db.bulk import append_rows
from supportgate.db.keys import in_keys
from supportgate.manifests.decision import Verdict, Violation

_alerts = table_of(Alert)
_manifests = table_of(Manifest)
_decisions = table_of(DecisionRow)


class Standing(msgspec.Struct, frozen=True):
    verdict: Verdict
    violations: tuple[Violation, ...] = ()


_STANDING_COLUMNS = ("id", "kind", "name", "seq", "verdict", "document")


def _standing(row: Any) -> Standing:
    return msgspec.convert({**row["document"], "verdict": row["verdict"]}, Standing)


def latest_standings(
    session: Session, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], Standing]:
    """The latest decision of each tracked (kind, name) among `keys` that has one (untracked:
    absent). One read, joined on the manifests' latest_decision_id."""
    wanted = set(keys)
    if not wanted:
        return {}
    statement = (
        select(*(_decisions.c[column] for column in _STANDING_COLUMNS))
        .join(_manifests, _manifests.c.latest_decision_id == _decisions.c.id)
        .where(in_keys(_manifests, wanted))
    )
    return {
        (row["kind"], row["name"]): _standing(row) for row in session.execute(statement).mappings()
    }


def insert_alerts(session: Session, rows: list[dict[str, Any]]) -> None:
    append_rows(session, _alerts, rows)


@dataclass(frozen=True, slots=True)
class AlertFilter:
    """What GET /v1/alerts narrows to (None: any; docs/reevaluation.md, Alerts)."""

    since: datetime | None = None
    kind: str | None = None
    owner: str | None = None
    cause: str | None = None
    matrix_version: str | None = None


def page(
    session: Session,
    where: AlertFilter,
    *,
    after_seq: int | None,
    limit: int,
    newest_first: bool = False,
) -> Sequence[Any]:
    """Oldest first (the API) or newest first (the console), after the cursor's seq."""
    statement = select(_alerts)
    if where.since is not None:
        statement = statement.where(_alerts.c.at >= where.since)
    for column in ("kind", "cause", "matrix_version"):
        if (value := getattr(where, column)) is not None:
            statement = statement.where(_alerts.c[column] == value)
    if where.owner is not None:
        statement = statement.where(
            exists().where(
                _manifests.c.kind == _alerts.c.kind,
                _manifests.c.name == _alerts.c.name,
                _manifests.c.owner == where.owner,
            )
        )
    seq = _alerts.c.seq
    if after_seq is not None:
        statement = statement.where(seq < after_seq if newest_first else seq > after_seq)
    statement = statement.order_by(seq.desc() if newest_first else seq).limit(limit)
    return session.execute(statement).all()


def standings_with_previous(
    session: Session, ids: Sequence[str]
) -> dict[str, tuple[Standing | None, Standing]]:
    """Each decision with these ids, by id, with the one made for the same manifest just
    before it (None: its first). One indexed read each (kind, name, seq)."""
    if not ids:
        return {}
    c = _decisions.c
    columns = [c[name] for name in _STANDING_COLUMNS]
    found: dict[str, tuple[Standing | None, Standing]] = {}
    for row in session.execute(select(*columns).where(c.id.in_(ids))).mappings():
        previous = (
            session.execute(
                select(*columns)
                .where(c.kind == row["kind"], c.name == row["name"], c.seq < row["seq"])
                .order_by(c.seq.desc())
                .limit(1)
            )
            .mappings()
            .first()
        )
        found[row["id"]] = (None if previous is None else _standing(previous), _standing(row))
    return found
