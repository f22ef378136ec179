"""Alerts: made in the ledger's write, read by GET /v1/alerts. `gained` and `lost` are not stored
but worked out from the decisions, written or read alike (docs/reevaluation.md, Alerts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import uuid4

import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import transaction
from supportgate.manifests.decision import CAUSES, MANIFEST_KINDS, Decision, ManifestRef
from supportgate.manifests.reasons import Reason, verdict_reason
from supportgate.pagination import (
    check_choice,
    check_limit,
    decode_seq_cursor,
    parse_time,
    trim_page,
)
from supportgate.threads import thread_twin

from . import repository
from .repository import AlertFilter, Standing
from .views import AlertPage, AlertView


def record_alerts(
    session: Session,
    decisions: Sequence[Decision],
    now: datetime,
    tracked_verdicts: Mapping[tuple[str, str], str | None],
) -> list[dict[str, Any]]:
    """An alert per verdict change among `decisions`, as GET /v1/alerts shows it. In the
    ledger's write after the decisions are inserted (an alert names its decision), before the
    tracked verdicts move; a latest decision is read only where the verdict changes."""
    first: dict[tuple[str, str], Decision] = {}
    for decision in decisions:
        first.setdefault((decision.manifest.kind, decision.manifest.name), decision)
    changed = [
        key
        for key, decision in first.items()
        if key in tracked_verdicts and tracked_verdicts[key] != decision.verdict
    ]
    previous: dict[tuple[str, str], Standing | Decision] = dict(
        repository.latest_standings(session, changed)
    )
    views: list[AlertView] = []
    for decision in decisions:
        key = (decision.manifest.kind, decision.manifest.name)
        before = previous.get(key)
        previous[key] = decision
        if before is None or before.verdict == decision.verdict:
            continue
        reason = verdict_reason(before, decision)
        views.append(
            AlertView(
                id=str(uuid4()),
                manifest=ManifestRef(kind=key[0], name=key[1]),
                from_=before.verdict,
                to=decision.verdict,
                cause=decision.cause,
                matrix_version=decision.matrix_version,
                at=now,
                decision_id=decision.id,
                gained=list(reason.gained),
                lost=list(reason.lost),
            )
        )
    if not views:
        return []
    repository.insert_alerts(session, [_row(view) for view in views])
    return [msgspec.to_builtins(view) for view in views]


class AlertService:
    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def page(
        self,
        *,
        since: str | None,
        cursor: str | None,
        limit: int,
        kind: str | None = None,
        owner: str | None = None,
        cause: str | None = None,
        matrix_version: str | None = None,
        newest_first: bool = False,
    ) -> AlertPage:
        check_choice("kind", kind, MANIFEST_KINDS)
        check_choice("cause", cause, CAUSES)
        where = AlertFilter(
            since=parse_time("since", since),
            kind=kind,
            owner=owner,
            cause=cause,
            matrix_version=matrix_version,
        )
        after = decode_seq_cursor(cursor)
        limit = check_limit(limit)
        with transaction(self._sessions) as session:
            rows = repository.page(
                session, where, after_seq=after, limit=limit + 1, newest_first=newest_first
            )
            rows, next_cursor = trim_page(rows, limit, lambda row: [row.seq])
            items = _with_reasons(session, [_view(row._mapping) for row in rows])
        return AlertPage(items=items, next_cursor=next_cursor)

    page_in_thread = thread_twin(page)


def _with_reasons(session: Session, views: list[AlertView]) -> list[AlertView]:
    pairs = repository.standings_with_previous(session, [view.decision_id for view in views])
    reasons: dict[str, Reason] = {
        id_: verdict_reason(before, after) for id_, (before, after) in pairs.items()
    }
    return [
        msgspec.structs.replace(view, gained=list(reason.gained), lost=list(reason.lost))
        if (reason := reasons.get(view.decision_id)) is not None
        else view
        for view in views
    ]


_COPIED = ("id", "cause", "matrix_version", "at", "decision_id")
"""The alert's columns that are its view's fields of the same name."""


def _row(view: AlertView) -> dict[str, Any]:
    return {
        **{column: getattr(view, column) for column in _COPIED},
        "kind": view.manifest.kind,
        "name": view.manifest.name,
        "from_verdict": view.from_,
        "to_verdict": view.to,
    }


def _view(values: Any) -> AlertView:
    return msgspec.convert(
        {
            **{column: values[column] for column in _COPIED},
            "manifest": {"kind": values["kind"], "name": values["name"]},
            "from": values["from_verdict"],
            "to": values["to_verdict"],
        },
        AlertView,
    )
