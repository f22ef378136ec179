"""What each console page shows, composed from the domains' own services (tracking, audit,
matrix versions); the console holds no queries and no rules of its own."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import urlencode

import msgspec
import yaml

from supportgate.alerts.services import AlertService
from supportgate.alerts.views import AlertView
from supportgate.audit.filters import AuditFilter
from supportgate.audit.services import AuditService
from supportgate.clock import Clock
from supportgate.errors import InputError, PolicyEngineUnavailable, UsageError
from supportgate.evaluations.tracking import TrackingService
from supportgate.evaluations.views import TrackedManifest
from supportgate.fleet.compare import FleetChange
from supportgate.fleet.query import FleetAt
from supportgate.fleet.report import FleetReport, fleet_report, manifests_csv, report_csv
from supportgate.fleet.services import FleetService
from supportgate.http_errors import input_status
from supportgate.impact.services import ImpactAnalysis, ImpactReport
from supportgate.manifests.decision import CAUSES, MANIFEST_KINDS, VERDICTS, Decision
from supportgate.matrix.services import MatrixService
from supportgate.matrix.views import MatrixVersionSummary
from supportgate.oscal.services import OscalReports
from supportgate.pagination import DEFAULT_LIMIT, MAX_LIMIT
from supportgate.policy.inputs import format_time
from supportgate.policy.live import LivePolicies
from supportgate.policy.views import PolicyView, policy_view
from supportgate.threads import in_thread
from supportgate.waivers.services import WaiverService
from supportgate.waivers.views import WaiverView
from supportgate.webhooks.services import WebhookService
from supportgate.webhooks.views import Delivery, Webhook

from .decision_diff import DecisionDiff, diff_decisions
from .matrix_diff import MatrixChange, diff_matrices
from .timeline import Chart, timeline

TIMELINE_DECISIONS = MAX_LIMIT
HISTORY_PAGE = 20
"""Decisions listed with their violations per page of a manifest's history."""
DIFF_CHOICES = 50
"""The latest decisions offered for a comparison (older ones: by id, `?a=...&b=...`)."""
AUDIT_FIELDS = ("kind", "name", "verdict", "rule", "since", "until", "matrix_version")
MANIFEST_FIELDS = ("kind", "verdict", "owner", "rule")
WAIVER_FIELDS = ("kind", "name", "rule", "active")
ALERT_FIELDS = ("since", "kind", "owner", "cause", "matrix_version")
ALERT_WINDOW = timedelta(days=30)
"""The alerts page starts this long ago unless told otherwise (alerts come newest first)."""
RECENT_DELIVERIES = 5
"""Deliveries shown per webhook subscription."""
FLEET_WINDOW = timedelta(days=30)
"""The fleet page compares today with this long ago unless told otherwise."""
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
Item = TypeVar("Item")
FleetFile = Literal["report", "manifests", "oscal"]


def given(value: str | None) -> str | None:
    """A form field as a filter: blank is not given."""
    return (value or "").strip() or None


@dataclass(frozen=True, slots=True)
class Query:
    """A page's filters as typed in, for the form, the links and the next page."""

    values: dict[str, str]

    @classmethod
    def of(cls, fields: tuple[str, ...], values: Mapping[str, str | None]) -> Query:
        return cls({name: text for name in fields if (text := given(values.get(name)))})

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    def encode(self, **extra: str | None) -> str:
        """The query string of these filters with `extra` (None drops a field)."""
        merged: dict[str, str | None] = {**self.values, **extra}
        return urlencode({k: v for k, v in merged.items() if v is not None})


@dataclass(frozen=True, slots=True)
class Choices:
    kinds: tuple[str, ...] = MANIFEST_KINDS
    verdicts: tuple[str, ...] = VERDICTS
    rules: tuple[str, ...] = ()
    causes: tuple[str, ...] = CAUSES
    matrix_versions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ListPage(Generic[Item]):
    query: Query
    choices: Choices
    items: list[Item]
    next_cursor: str | None
    now: datetime | None = None
    """The waivers page's: what expiry is counted down from."""


@dataclass(frozen=True, slots=True)
class ManifestPage:
    tracked: TrackedManifest
    content: str
    chart: Chart | None
    charted: int
    chart_is_partial: bool
    choices: list[Decision]
    """The decisions offered for a comparison: the latest DIFF_CHOICES, newest first."""
    decisions: list[Decision]
    next_cursor: str | None
    diff: DecisionDiff | None
    a: str | None
    b: str | None
    deployments: list[TrackedManifest] = field(default_factory=list)
    """A pool's: the tracked deployments whose `hardware.ref` names it, (kind, name) order."""
    more_deployments: bool = False


@dataclass(frozen=True, slots=True)
class MatrixPage:
    versions: list[MatrixVersionSummary]
    old: str | None
    new: str | None
    changes: tuple[MatrixChange, ...] = field(default=())
    current: Mapping[str, Any] | None = None
    """The document in effect: its hardware catalogue, platform tiers and alternatives."""


@dataclass(frozen=True, slots=True)
class ImpactPage:
    proposal: str
    report: ImpactReport | None
    error: str | None
    status_code: int = 200


@dataclass(frozen=True, slots=True)
class FleetSide:
    """The fleet at the end of one day (UTC), or now for today."""

    day: str
    fleet: FleetAt
    report: FleetReport


@dataclass(frozen=True, slots=True)
class FleetRow:
    """A manifest whose verdict changed between the two days, and why: the violations its
    decision gained or lost (`diff`, both tracked), or those of the one decision there is."""

    change: FleetChange
    diff: DecisionDiff | None


@dataclass(frozen=True, slots=True)
class FleetPage:
    earlier: FleetSide
    later: FleetSide
    changes: list[FleetRow]


@dataclass(frozen=True, slots=True)
class Subscription:
    webhook: Webhook
    deliveries: list[Delivery]
    more: bool


@dataclass(kw_only=True, eq=False)  # a service: equal only to itself
class ConsoleService:
    policies: LivePolicies
    tracking: TrackingService
    audit_service: AuditService
    matrices: MatrixService
    impact_analysis: ImpactAnalysis
    alert_service: AlertService
    fleet_service: FleetService
    oscal: OscalReports
    webhook_service: WebhookService
    waiver_service: WaiverService
    clock: Clock

    @property
    def choices(self) -> Choices:
        """The filters' choices; the rules are those in force now (they change on reload)."""
        return Choices(rules=tuple(sorted(self.policies.catalog)))

    def rules(self) -> PolicyView:
        policies = self.policies
        return policy_view(policies.bundle, policies.catalog, policies.last_error)

    @in_thread
    def manifests(self, query: Query, *, cursor: str | None) -> ListPage[TrackedManifest]:
        page = self.tracking.page(
            kind=query.get("kind"),
            verdict=query.get("verdict"),
            owner=query.get("owner"),
            rule=query.get("rule"),
            cursor=given(cursor),
            limit=DEFAULT_LIMIT,
        )
        return ListPage(query, self.choices, page.items, page.next_cursor)

    @in_thread
    def manifest(
        self, kind: str, name: str, *, cursor: str | None, a: str | None, b: str | None
    ) -> ManifestPage:
        tracked = self.tracking.one(kind, name)
        # The manifest's decisions through the audit search (kind and name are the filter):
        # its pages read the decision columns only, not the stored policy input.
        audit = self.audit_service
        where = AuditFilter(kind=kind, name=name)
        recent = audit.page(where, cursor=None, limit=TIMELINE_DECISIONS)
        cursor = given(cursor)
        listed = audit.page(where, cursor=cursor, limit=HISTORY_PAGE)
        a, b = given(a), given(b)
        if a is None and b is None and len(recent.items) >= 2:  # noqa: PLR2004 - a pair
            b, a = recent.items[0].id, recent.items[1].id
        on_pool = None
        if kind == "HardwareManifest":
            on_pool = self.tracking.page(
                kind="DeploymentManifest",
                verdict=None,
                owner=None,
                hardware_ref=name,
                cursor=None,
                limit=MAX_LIMIT,
            )
        return ManifestPage(
            tracked=tracked,
            content=msgspec.json.format(msgspec.json.encode(tracked.content)).decode(),
            chart=timeline(recent.items),
            charted=len(recent.items),
            chart_is_partial=recent.next_cursor is not None,
            choices=recent.items[:DIFF_CHOICES],
            decisions=listed.items,
            next_cursor=listed.next_cursor,
            diff=self._diff(kind, name, a, b),
            a=a,
            b=b,
            deployments=[] if on_pool is None else on_pool.items,
            more_deployments=on_pool is not None and on_pool.next_cursor is not None,
        )

    def _diff(self, kind: str, name: str, a: str | None, b: str | None) -> DecisionDiff | None:
        if a is None and b is None:
            return None
        if a is None or b is None:
            raise UsageError("choose two decisions to compare", field=("a" if a is None else "b"))
        found = self.tracking.decisions(kind, name, [a, b])
        for param, wanted in (("a", a), ("b", b)):
            if wanted not in found:
                raise UsageError(f"{kind} {name!r} has no decision {wanted!r}", field=param)
        return diff_decisions(found[a], found[b])

    @in_thread
    def audit(self, query: Query, *, cursor: str | None) -> ListPage[Decision]:
        where = self._audit_filter(query)
        page = self.audit_service.page(where, cursor=given(cursor), limit=DEFAULT_LIMIT)
        return ListPage(query, self.choices, page.items, page.next_cursor)

    async def audit_csv(self, query: Query) -> AsyncIterator[bytes]:
        return await self.audit_service.csv(self._audit_filter(query))

    @staticmethod
    def _audit_filter(query: Query) -> AuditFilter:
        return AuditFilter.parse(**{name: query.get(name) for name in AUDIT_FIELDS})

    @in_thread
    def matrix(self, *, old: str | None, new: str | None) -> MatrixPage:
        matrices = self.matrices
        versions = matrices.version_list().items
        try:
            current: Mapping[str, Any] | None = matrices.current_view().document
        except PolicyEngineUnavailable:  # before any version takes effect
            current = None
        old, new = given(old), given(new)
        if old is None and new is None and len(versions) >= 2:  # noqa: PLR2004 - a pair
            new, old = versions[0].version, versions[1].version
        if old is None or new is None:
            if old is not None or new is not None:
                raise UsageError("choose two versions", field=("old" if old is None else "new"))
            return MatrixPage(versions, None, None, current=current)
        documents = []
        for param, version in (("old", old), ("new", new)):
            view = matrices.version_view(version)
            if view is None:
                raise UsageError(f"no matrix version {version!r} is published", field=param)
            documents.append(view.document)
        return MatrixPage(versions, old, new, diff_matrices(*documents), current)

    @in_thread
    def impact_form(self) -> ImpactPage:
        current = self.matrices.current_view().document
        return ImpactPage(yaml.safe_dump(current, sort_keys=False), None, None)

    @in_thread
    def impact(self, proposal: str) -> ImpactPage:
        """A bad matrix is shown on the form, the message naming the field, the text kept."""
        try:
            report = self.impact_analysis.analyse_document(proposal.encode(), fmt="yaml")
        except InputError as exc:
            return ImpactPage(proposal, None, str(exc), status_code=input_status(exc))
        return ImpactPage(proposal, report, None)

    @in_thread
    def alerts(self, query: Query, *, cursor: str | None) -> ListPage[AlertView]:
        window_start = (self.clock.now() - ALERT_WINDOW).replace(microsecond=0)
        start = query.get("since") or format_time(window_start)
        query = Query({**query.values, "since": start})
        page = self.alert_service.page(
            since=start,
            kind=query.get("kind"),
            owner=query.get("owner"),
            cause=query.get("cause"),
            matrix_version=query.get("matrix_version"),
            cursor=given(cursor),
            limit=DEFAULT_LIMIT,
            newest_first=True,
        )
        versions = tuple(v.version for v in self.matrices.version_list().items)
        choices = replace(self.choices, matrix_versions=versions)
        return ListPage(query, choices, page.items, page.next_cursor)

    @in_thread
    def fleet(self, *, earlier: str | None, later: str | None) -> FleetPage:
        """The fleet at the end of two days (`from`, `to`: YYYY-MM-DD, UTC; today: now), and
        the manifests whose verdict changed between them."""
        now = self.clock.now()
        today = now.date()
        to_day = _day("to", given(later), now) or today
        from_day = _day("from", given(earlier), now) or to_day - FLEET_WINDOW
        if from_day > to_day:
            raise UsageError(f"must not be after to ({to_day}), got {from_day}", field="from")
        sides = []
        for day in (from_day, to_day):
            fleet = self.fleet_service.at(_day_end(day, now))
            sides.append(FleetSide(day.isoformat(), fleet, fleet_report(fleet)))
        rows = [
            FleetRow(
                change,
                None
                if change.before is None or change.after is None
                else diff_decisions(change.before.decision, change.after.decision),
            )
            for change in self.fleet_service.changes(sides[0].fleet, sides[1].fleet)
        ]
        return FleetPage(sides[0], sides[1], rows)

    @in_thread
    def fleet_file(self, day: str | None, what: FleetFile) -> tuple[str, bytes]:
        """The fleet at the end of `day` (YYYY-MM-DD, UTC; default today: now), and the day."""
        now = self.clock.now()
        found = _day("day", given(day), now) or now.date()
        end = _day_end(found, now)
        if what == "oscal":
            return found.isoformat(), self.oscal.document(end)
        fleet = self.fleet_service.at(end)
        body = manifests_csv(fleet) if what == "manifests" else report_csv(fleet_report(fleet))
        return found.isoformat(), body

    @in_thread
    def webhooks(self) -> list[Subscription]:
        webhooks = self.webhook_service
        found = []
        for webhook in webhooks.subscriptions().items:
            page = webhooks.deliveries(
                webhook.id, status=None, cursor=None, limit=RECENT_DELIVERIES
            )
            if page is not None:  # else deleted since it was listed
                found.append(Subscription(webhook, page.items, page.next_cursor is not None))
        return found

    @in_thread
    def waivers(self, query: Query, *, cursor: str | None) -> ListPage[WaiverView]:
        active = query.get("active")
        if active not in {None, "true", "false"}:
            raise UsageError(f"must be true or false, got {active!r}", field="active")
        page = self.waiver_service.page(
            kind=query.get("kind"),
            name=query.get("name"),
            rule=query.get("rule"),
            active=None if active is None else active == "true",
            cursor=given(cursor),
            limit=DEFAULT_LIMIT,
        )
        return ListPage(query, self.choices, page.items, page.next_cursor, self.clock.now())


def _day(field_name: str, text: str | None, now: datetime) -> date | None:
    if text is None:
        return None
    try:
        day = date.fromisoformat(text) if _DAY.fullmatch(text) else None
    except ValueError:
        day = None
    if day is None:
        raise UsageError(f"not a date such as 2026-10-01: {text!r}", field=field_name)
    if day > now.date():
        raise UsageError(f"is after today ({now.date()}): {text!r}", field=field_name)
    return day


def _day_end(day: date, now: datetime) -> datetime:
    return min(datetime.combine(day, time.max, UTC), now)
