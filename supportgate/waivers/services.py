"""Waivers. Every evaluation asks for its manifest's waivers, so the active ones are held in
memory, reloaded after this process creates or deletes one and every RELOAD_SECONDS (another
replica may have); sweeps read the database. When a waiver applies: docs/waivers.md.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import Waiver, transaction
from supportgate.errors import UsageError
from supportgate.ledger.batches import Batch, WaiverCreation, WaiverDeletion
from supportgate.ledger.writer import LedgerWriter
from supportgate.logging import get_logger
from supportgate.manifests.decision import MANIFEST_KINDS
from supportgate.pagination import check_choice, check_limit, decode_cursor, trim_page
from supportgate.policy.catalog import read_catalog
from supportgate.policy.inputs import format_time
from supportgate.threads import thread_twin

from . import repository
from .views import LATEST_EXPIRY, WaiverPage, WaiverRequest, WaiverView

log = get_logger(__name__)

RELOAD_SECONDS = 5.0
ManifestKey = tuple[str, str]
PolicyWaiver = dict[str, Any]
"""A waiver as the policy input has it: `{id, rule, expires_at}` (docs/policy-interface.md)."""


def deny_rule_ids(modules: Iterable[tuple[str, str]]) -> frozenset[str]:
    """The rules a waiver may name."""
    return frozenset(rule.id for rule in read_catalog(modules).values() if rule.severity == "deny")


class WaiverService:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        ledger: LedgerWriter,
        deny_rules: frozenset[str],
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._sessions = sessions
        self._ledger = ledger
        self.deny_rules = deny_rules
        self._clock = clock
        self._lock = threading.Lock()  # guards the two fields below
        self._reloading = threading.Lock()  # one reload at a time, in commit order
        self._active: dict[ManifestKey, tuple[tuple[datetime, PolicyWaiver], ...]] = {}
        self._loaded_at = float("-inf")

    def create(self, request: WaiverRequest, *, created_by: str) -> WaiverView:
        now = self._clock.now()
        self._check(request, now)
        creation = WaiverCreation(
            id=str(uuid4()),
            rule=request.rule,
            kind=request.kind,
            name=request.name,
            justification=request.justification.strip(),
            expires_at=request.expires_at.astimezone(UTC),
            created_by=created_by,
            created_at=now,
        )
        self._ledger.write(Batch(waivers_created=[creation]))
        self._reload()
        view = msgspec.convert(creation, WaiverView, from_attributes=True)
        log.info(
            "waiver_created",
            **_named(view),
            expires_at=format_time(view.expires_at),
            created_by=created_by,
        )
        return view

    create_in_thread = thread_twin(create)

    def delete(self, waiver_id: str, *, deleted_by: str) -> WaiverView | None:
        """Mark the waiver deleted (the row stays); None when no undeleted waiver has that id."""
        deletion = WaiverDeletion(id=waiver_id, deleted_by=deleted_by, deleted_at=self._clock.now())
        applied = self._ledger.write(Batch(waivers_deleted=[deletion]))
        if applied.conflicts_in("waiver-deleted"):
            return None
        self._reload()
        with transaction(self._sessions) as session:
            row = repository.by_id(session, waiver_id)
            assert row is not None  # noqa: S101 - a waiver is never removed
            view = _view(row)
        log.info("waiver_deleted", **_named(view), deleted_by=deleted_by)
        return view

    delete_in_thread = thread_twin(delete)

    def _check(self, request: WaiverRequest, now: datetime) -> None:
        if request.rule not in self.deny_rules:
            raise UsageError(
                f"{request.rule!r} is not a deny rule; a waiver names one of "
                f"{', '.join(sorted(self.deny_rules))}",
                field="$.rule",
            )
        expires_at = request.expires_at
        if expires_at.tzinfo is None or expires_at.utcoffset() is None:
            raise UsageError("must carry a time zone (`Z` or `+01:00`)", field="$.expires_at")
        if not now < expires_at < LATEST_EXPIRY:
            raise UsageError(
                f"must be in the future and before {format_time(LATEST_EXPIRY)}, "
                f"got {expires_at.isoformat()}",
                field="$.expires_at",
            )

    def page(
        self,
        *,
        kind: str | None,
        name: str | None,
        rule: str | None,
        active: bool | None,
        cursor: str | None,
        limit: int,
    ) -> WaiverPage:
        check_choice("kind", kind, MANIFEST_KINDS)
        before = decode_cursor(cursor, int)[0] if cursor else None
        limit = check_limit(limit)
        now = self._clock.now()
        with transaction(self._sessions) as session:
            rows = repository.page(
                session,
                kind=kind,
                name=name,
                rule=rule,
                active=active,
                now=now,
                before_seq=before,
                limit=limit + 1,
            )
            items = [(row.seq, _view(row)) for row in rows]
        items, next_cursor = trim_page(items, limit, lambda item: [item[0]])
        return WaiverPage(items=[view for _, view in items], next_cursor=next_cursor)

    page_in_thread = thread_twin(page)

    def cache_is_fresh(self) -> bool:
        return self._clock.monotonic() - self._loaded_at <= RELOAD_SECONDS

    def active_for(self, kind: str, name: str, at: datetime) -> list[PolicyWaiver]:
        if not self.cache_is_fresh():
            self._refresh()
        with self._lock:
            held = self._active.get((kind, name), ())
        return [dict(waiver) for expires_at, waiver in held if expires_at > at]

    def active_by_manifest(
        self, keys: Sequence[ManifestKey], at: datetime
    ) -> dict[ManifestKey, list[PolicyWaiver]]:
        """For sweeps, from the database: each key's waivers in force at `at` (every key is in
        the answer, most with an empty list)."""
        wanted = set(keys)
        found: dict[ManifestKey, list[PolicyWaiver]] = {key: [] for key in wanted}
        if not wanted:
            return found
        with transaction(self._sessions) as session:
            rows = repository.active(session, at, names={name for _, name in wanted})
            for row in rows:
                if (row.kind, row.name) in wanted:
                    found[(row.kind, row.name)].append(_policy_form(row))
        return found

    def next_expiry(self, after: datetime) -> datetime | None:
        """When the next waiver (not deleted) expires after `after`, from the database: the
        time a sweep must flip its manifest back."""
        with transaction(self._sessions) as session:
            return repository.next_expiry(session, after)

    def expired_unjudged(self, now: datetime) -> tuple[datetime, list[ManifestKey]] | None:
        """The latest expiry by `now` whose manifests were last judged before their waiver
        expired (one that passed while the service was down included), and those manifests;
        None when every expiry is judged."""
        with transaction(self._sessions) as session:
            found = repository.expired_unjudged(session, now)
        if not found:
            return None
        return max(at for _, _, at in found), sorted({(kind, name) for kind, name, _ in found})

    def _refresh(self) -> None:
        """Reload a stale cache; while another thread reloads it, answer from the one held
        (a first load is waited for: there is nothing to answer from yet)."""
        loaded = self._loaded_at != float("-inf")
        if not self._reloading.acquire(blocking=not loaded):
            return
        try:
            if not self.cache_is_fresh():
                self._read()
        finally:
            self._reloading.release()

    def _reload(self) -> None:
        """Reload now, after this process changed a waiver: waits for a reload under way,
        which may have read before the change committed."""
        with self._reloading:
            self._read()

    def _read(self) -> None:
        loaded_at = self._clock.monotonic()
        now = self._clock.now()
        active: defaultdict[ManifestKey, list[tuple[datetime, PolicyWaiver]]] = defaultdict(list)
        with transaction(self._sessions) as session:
            for row in repository.active(session, now):
                active[(row.kind, row.name)].append((row.expires_at, _policy_form(row)))
        with self._lock:
            self._active = {key: tuple(held) for key, held in active.items()}
            self._loaded_at = loaded_at


def _policy_form(row: Waiver) -> PolicyWaiver:
    return {"id": row.id, "rule": row.rule, "expires_at": format_time(row.expires_at)}


def _named(view: WaiverView) -> dict[str, str]:
    return {"waiver_id": view.id, "rule": view.rule, "manifest": f"{view.kind}/{view.name}"}


def _view(row: Waiver) -> WaiverView:
    return msgspec.convert(row, WaiverView, from_attributes=True)
