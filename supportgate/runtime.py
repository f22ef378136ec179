"""Everything a running supportgate holds, built once from Settings and shared by the API and
the CLI: database, policy engine, matrix versions, API keys and the decision recorder."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.alerts.services import AlertService
from supportgate.audit.services import AuditService
from supportgate.auth.services import KeyService
from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.config import Settings
from supportgate.db import create_db_engine, session_factory
from supportgate.db.migrate import ensure_current, upgrade
from supportgate.evaluations.services import EvaluationService
from supportgate.evaluations.tracking import TrackingService
from supportgate.events import (
    DecisionsRecorded,
    DeliveriesEnqueued,
    Events,
    HardwareRecorded,
    MatrixPublished,
    WaiverChanged,
)
from supportgate.impact.services import ImpactAnalysis
from supportgate.ledger.writer import LedgerWriter
from supportgate.ledger.writer_process import ProcessLedgerWriter
from supportgate.logging import get_logger
from supportgate.matrix import load_matrix_file
from supportgate.matrix.services import MatrixService
from supportgate.observability.metrics import Metrics
from supportgate.policy import PolicyBundle, PolicyEngine, build_engine
from supportgate.reevaluation.schedule import SweepScheduler
from supportgate.reevaluation.services import ReevaluationService
from supportgate.waivers.services import WaiverService, deny_rule_ids
from supportgate.webhooks.services import WebhookService

log = get_logger(__name__)


@dataclass
class Runtime:
    settings: Settings
    db: Engine
    sessions: sessionmaker[Session]
    bundle: PolicyBundle
    engine: PolicyEngine
    matrices: MatrixService
    keys: KeyService
    events: Events
    ledger: LedgerWriter
    evaluations: EvaluationService
    tracking: TrackingService
    audit: AuditService
    alerts: AlertService
    metrics: Metrics
    webhooks: WebhookService
    waivers: WaiverService
    impact: ImpactAnalysis
    reevaluation: ReevaluationService
    sweeps: SweepScheduler
    clock: Clock

    @classmethod
    def build(cls, settings: Settings, *, clock: Clock = SYSTEM_CLOCK) -> Runtime:
        """Wire the parts; nothing is read or written until start(). `clock` is the one every
        part that compares times asks (tests give a fake one)."""
        db = create_db_engine(settings.database_url)
        sessions = session_factory(db)
        bundle = PolicyBundle.load(settings.policy_dir)
        engine = build_engine(bundle, settings.opa_url)
        matrices = MatrixService(sessions, clock=clock)
        waivers = WaiverService(sessions, deny_rules=deny_rule_ids(bundle.modules), clock=clock)
        metrics = Metrics(sessions)
        events = Events()
        ledger = _ledger(settings, sessions, events)
        evaluations = EvaluationService(
            sessions=sessions,
            engine=engine,
            matrices=matrices,
            ledger=ledger,
            waivers=waivers,
        )
        reevaluation = ReevaluationService(
            sessions=sessions,
            db=db,
            engine=engine,
            matrices=matrices,
            ledger=ledger,
            waivers_for=lambda keys: waivers.active_by_manifest(keys, clock.now()),
        )
        waivers.subscribe(
            lambda change: reevaluation.waiver_changed(
                WaiverChanged(
                    waiver_id=change.waiver.id,
                    action=change.action,
                    kind=change.waiver.kind,
                    name=change.waiver.name,
                    affects_tracked=change.tracked,
                )
            )
        )
        matrices.on_published = lambda published: reevaluation.matrix_published(
            MatrixPublished(version=published.version)
        )
        webhooks = WebhookService(sessions, clock=clock)
        events.on(HardwareRecorded, reevaluation.hardware_recorded)
        events.on(DecisionsRecorded, metrics.count_decisions)
        events.on(DeliveriesEnqueued, lambda _enqueued: webhooks.wake())
        sweeps = SweepScheduler(
            reevaluation, matrices, cron=settings.reevaluate_cron, waivers=waivers, clock=clock
        )
        # A new waiver may expire before the next tick: schedule its expiry now.
        waivers.subscribe(lambda _change: sweeps.tick())
        return cls(
            settings=settings,
            db=db,
            sessions=sessions,
            bundle=bundle,
            engine=engine,
            matrices=matrices,
            keys=KeyService(sessions, clock=clock),
            events=events,
            ledger=ledger,
            evaluations=evaluations,
            tracking=TrackingService(sessions),
            audit=AuditService(sessions),
            alerts=AlertService(sessions),
            metrics=metrics,
            webhooks=webhooks,
            waivers=waivers,
            impact=ImpactAnalysis(
                sessions=sessions, bundle=bundle, matrices=matrices, waivers=waivers, clock=clock
            ),
            reevaluation=reevaluation,
            sweeps=sweeps,
            clock=clock,
        )

    def prepare_database(self, *, upgrade_schema: bool) -> None:
        """Bring the schema to head (or refuse when it is behind), and seed the default matrix."""
        if upgrade_schema:
            upgrade(self.settings.database_url)
        else:
            ensure_current(self.db)
        self.matrices.ensure_default(load_matrix_file(self.bundle.default_matrix_path))

    def start(self, *, upgrade_schema: bool) -> None:
        self.prepare_database(upgrade_schema=upgrade_schema)
        self.ledger.start()
        self.webhooks.start()
        self.reevaluation.start()
        self.sweeps.start()
        log.info(
            "supportgate_started",
            engine=self.engine.name,
            policy_revision=self.bundle.revision,
            matrix_version=self.matrices.current().version,
        )

    def stop(self) -> None:
        self.sweeps.stop()
        self.reevaluation.stop()
        self.webhooks.stop()
        self.ledger.stop()
        self.engine.close()
        self.db.dispose()


def _ledger(settings: Settings, sessions: sessionmaker[Session], events: Events) -> LedgerWriter:
    if settings.writes_in_process:
        return ProcessLedgerWriter(sessions, settings.database_url, events=events)
    return LedgerWriter(sessions, events=events)
