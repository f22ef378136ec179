"""FleetService: the fleet at a date for the API and the console (as_of checked here)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import transaction
from supportgate.errors import UsageError
from supportgate.manifests.decision import MANIFEST_KINDS as KINDS
from supportgate.manifests.decision import VERDICTS, Decision
from supportgate.pagination import check_choice, check_limit, decode_cursor, parse_time, trim_page
from supportgate.policy.inputs import format_time
from supportgate.threads import in_thread, thread_twin

from .compare import FleetChange, verdict_changes
from .query import FleetAt, FleetManifest, fleet_at
from .report import FleetReport, fleet_report, report_csv


class FleetManifestView(msgspec.Struct, frozen=True, kw_only=True):
    """A manifest tracked at as_of, with the decision current for it then (`latest_decision`,
    as in GET /v1/manifests, so a client reads both alike)."""

    kind: str
    name: str
    owner: str | None
    content: dict[str, Any]
    latest_decision: Decision


class FleetManifestPage(msgspec.Struct, frozen=True, kw_only=True):
    """GET /v1/manifests?as_of=T: a page of the manifests tracked at T, (kind, name) order."""

    as_of: datetime
    matrix_version: str | None
    policy_revision: str | None
    items: list[FleetManifestView]
    next_cursor: str | None


class FleetService:
    def __init__(self, sessions: sessionmaker[Session], *, clock: Clock = SYSTEM_CLOCK) -> None:
        self._sessions = sessions
        self._clock = clock

    def as_of(self, text: str | None) -> datetime:
        """None: now. A later moment is refused: the log holds only what happened."""
        now = self._clock.now()
        moment = parse_time("as_of", text)
        if moment is None:
            return now
        if moment > now:
            raise UsageError(
                f"is after now ({format_time(now)}): the log tells the past, got {text!r}",
                field="as_of",
            )
        return moment

    def at(self, as_of: datetime) -> FleetAt:
        with transaction(self._sessions) as session:
            return fleet_at(session, as_of)

    def changes(self, earlier: FleetAt, later: FleetAt) -> list[FleetChange]:
        with transaction(self._sessions) as session:
            return verdict_changes(session, earlier, later)

    @in_thread
    def manifests_page(
        self,
        as_of: str,
        *,
        kind: str | None,
        verdict: str | None,
        owner: str | None,
        cursor: str | None,
        limit: int,
    ) -> FleetManifestPage:
        check_choice("kind", kind, KINDS)
        check_choice("verdict", verdict, VERDICTS)
        after = tuple(decode_cursor(cursor, str, str)) if cursor else None
        limit = check_limit(limit)
        fleet = self.at(self.as_of(as_of))
        chosen = [
            m
            for m in fleet.manifests
            if (kind is None or m.kind == kind)
            and (verdict is None or m.decision.verdict == verdict)
            and (owner is None or m.owner == owner)
            and (after is None or (m.kind, m.name) > after)
        ]
        items, next_cursor = trim_page(
            [_view(m) for m in chosen[: limit + 1]], limit, lambda item: [item.kind, item.name]
        )
        return FleetManifestPage(
            as_of=fleet.as_of,
            matrix_version=fleet.matrix_version,
            policy_revision=fleet.policy_revision,
            items=items,
            next_cursor=next_cursor,
        )

    def report(self, as_of: str | None) -> FleetReport:
        return fleet_report(self.at(self.as_of(as_of)))

    report_in_thread = thread_twin(report)

    @in_thread
    def report_csv(self, as_of: str | None) -> tuple[FleetReport, bytes]:
        report = self.report(as_of)
        return report, report_csv(report)


def _view(manifest: FleetManifest) -> FleetManifestView:
    return FleetManifestView(
        kind=manifest.kind,
        name=manifest.name,
        owner=manifest.owner,
        content=manifest.content(),
        latest_decision=manifest.decision,
    )
