"""Tracked manifests read; untracking is a write of the ledger (ledger/tracking.py is the one
writer of the tracked manifests)."""

from __future__ import annotations

from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import Decision as DecisionRow
from supportgate.db import Manifest, transaction
from supportgate.errors import NotFound
from supportgate.ledger.batches import Batch, Untracking
from supportgate.ledger.rows import decision_from_row
from supportgate.ledger.writer import LedgerWriter
from supportgate.manifests.decision import MANIFEST_KINDS as KINDS
from supportgate.manifests.decision import VERDICTS, Decision
from supportgate.pagination import check_choice, check_limit, decode_cursor, trim_page
from supportgate.threads import thread_twin

from . import repository
from .views import DecisionPage, TrackedManifest, TrackedManifestPage


class TrackingService:
    def __init__(
        self, sessions: sessionmaker[Session], *, ledger: LedgerWriter, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self._sessions = sessions
        self._ledger = ledger
        self._clock = clock

    def page(
        self,
        *,
        kind: str | None,
        verdict: str | None,
        owner: str | None,
        cursor: str | None,
        limit: int,
        rule: str | None = None,
        hardware_ref: str | None = None,
    ) -> TrackedManifestPage:
        check_choice("kind", kind, KINDS)
        check_choice("verdict", verdict, VERDICTS)
        after = tuple(decode_cursor(cursor, str, str)) if cursor else None
        limit = check_limit(limit)
        with transaction(self._sessions) as session:
            rows = repository.tracked_page(
                session,
                kind=kind,
                verdict=verdict,
                owner=owner,
                rule=rule,
                hardware_ref=hardware_ref,
                after=after,
                limit=limit + 1,
            )
            decisions = repository.decisions_by_id(
                session, [row.latest_decision_id for row in rows if row.latest_decision_id]
            )
            items = [_view(row, decisions.get(row.latest_decision_id or "")) for row in rows]
        items, next_cursor = trim_page(items, limit, lambda item: [item.kind, item.name])
        return TrackedManifestPage(items=items, next_cursor=next_cursor)

    page_in_thread = thread_twin(page)

    def one(self, kind: str, name: str) -> TrackedManifest:
        with transaction(self._sessions) as session:
            row = self._tracked(session, kind, name)
            latest = repository.decisions_by_id(session, [row.latest_decision_id or ""])
            return _view(row, latest.get(row.latest_decision_id or ""))

    one_in_thread = thread_twin(one)

    def history(self, kind: str, name: str, *, cursor: str | None, limit: int) -> DecisionPage:
        before = decode_cursor(cursor, int)[0] if cursor else None
        limit = check_limit(limit)
        with transaction(self._sessions) as session:
            rows = repository.history_page(session, kind, name, before_seq=before, limit=limit + 1)
            if not rows and before is None:
                self._tracked(session, kind, name)  # 404 for a name never seen
        rows, next_cursor = trim_page(rows, limit, lambda row: [row.seq])
        return DecisionPage(items=[decision_from_row(row) for row in rows], next_cursor=next_cursor)

    history_in_thread = thread_twin(history)

    def decisions(self, kind: str, name: str, ids: list[str]) -> dict[str, Decision]:
        """An id of another manifest's decision, or of none, is left out."""
        check_choice("kind", kind, KINDS)
        with transaction(self._sessions) as session:
            rows = repository.decisions_by_id(session, ids)
            return {
                id_: decision_from_row(row)
                for id_, row in rows.items()
                if row.kind == kind and row.name == name
            }

    def untrack(self, kind: str, name: str, *, by: str | None = None) -> None:
        check_choice("kind", kind, KINDS)
        untracking = Untracking(kind=kind, name=name, untracked_by=by, at=self._clock.now())
        if self._ledger.write(Batch(untracked=[untracking])).conflicts_in("untracked"):
            raise NotFound(f"no tracked {kind} named {name!r}", field="name")

    untrack_in_thread = thread_twin(untrack)

    @staticmethod
    def _tracked(session: Session, kind: str, name: str) -> Manifest:
        check_choice("kind", kind, KINDS)
        row = repository.tracked(session, kind, name)
        if row is None:
            raise NotFound(f"no tracked {kind} named {name!r}", field="name")
        return row


def _view(row: Manifest, latest: DecisionRow | None) -> TrackedManifest:
    decision: Decision | None = None if latest is None else decision_from_row(latest)
    return TrackedManifest(
        kind=row.kind,
        name=row.name,
        owner=row.owner,
        content=row.content,
        latest_decision=decision,
        tracked_since=row.created_at,
        updated_at=row.updated_at,
        last_evaluated_at=row.last_evaluated_at,
    )
