"""A running supportgate's parts, each built once and handed the parts it needs, and their
lifecycle. No registry: supportgate/app.py hands each domain's routes the parts they use, and
every reaction to an event (supportgate/events.py) is registered in `react`, here.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.alerts.services import AlertService
from supportgate.audit.proofs import ProofService
from supportgate.audit.services import AuditService
from supportgate.auth.limits import RequestLimits
from supportgate.auth.services import KeyService
from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.config import Settings
from supportgate.db import create_db_engine, session_factory
from supportgate.db.migrate import ensure_current, upgrade
from supportgate.evaluations.dry_run import DryRunService
from supportgate.evaluations.services import EvaluationService
from supportgate.evaluations.tracking import TrackingService
from supportgate.events import (
    DecisionsRecorded,
    DeliveriesEnqueued,
    Events,
    HardwareRecorded,
    JobFailed,
    MatrixPublished,
    PolicyReloadFailed,
    SweepEnded,
    WaiverChanged,
)
from supportgate.fleet.services import FleetService
from supportgate.impact.services import ImpactAnalysis
from supportgate.ledger.checkpointer import Checkpointer
from supportgate.ledger.writer import LedgerWriter
from supportgate.logging import get_logger
from supportgate.matrix import load_matrix_file, prepare
from supportgate.matrix.services import MatrixService
from supportgate.matrix_sources.services import MatrixSourceService
from supportgate.observability.health import Readiness
from supportgate.observability.metrics import Metrics
from supportgate.oscal.services import OscalReports
from supportgate.policy import PolicyBundle, PolicyEngine, build_engine
from supportgate.policy.bundle_server import BundleServer
from supportgate.policy.live import LivePolicies
from supportgate.reevaluation.schedule import SweepScheduler
from supportgate.reevaluation.services import ReevaluationService
from supportgate.threads import thread_twin
from supportgate.waivers.services import WaiverService, deny_rule_ids
from supportgate.webhooks.services import WebhookService
from supportgate.webhooks.targets import AllowList

log = get_logger(__name__)


@dataclass
class Runtime:
    settings: Settings
    db: Engine
    sessions: sessionmaker[Session]
    policies: LivePolicies
    bundles: BundleServer
    engine: PolicyEngine
    matrices: MatrixService
    matrix_source: MatrixSourceService
    keys: KeyService
    limits: RequestLimits
    events: Events
    ledger: LedgerWriter
    evaluations: EvaluationService
    dry_runs: DryRunService
    tracking: TrackingService
    fleet: FleetService
    audit: AuditService
    alerts: AlertService
    metrics: Metrics
    readiness: Readiness
    webhooks: WebhookService
    waivers: WaiverService
    impact: ImpactAnalysis
    reevaluation: ReevaluationService
    sweeps: SweepScheduler
    clock: Clock
    checkpointer: Checkpointer
    proofs: ProofService
    oscal: OscalReports

    @classmethod
    def build(cls, settings: Settings, *, clock: Clock = SYSTEM_CLOCK) -> Runtime:
        """Nothing is read or written until start()."""
        db = create_db_engine(settings.database_url, settings.database_timeouts)
        sessions = session_factory(db)
        bundle = PolicyBundle.load(settings.policy_dir, settings.policy_bundles)
        default_matrix = prepare(load_matrix_file(bundle.default_matrix_path))
        bundles = BundleServer.from_settings(settings, bundle, default_matrix.document)
        served = bundles.bundle.revision if bundles.bundle else None
        engine = build_engine(bundle, settings, served)
        events = Events()
        policies = LivePolicies(
            settings,
            bundle,
            engine=engine,
            server=bundles,
            default_matrix=default_matrix.document,
            events=events,
            clock=clock,
        )
        ledger = LedgerWriter(sessions, events=events, clock=clock)
        matrices = MatrixService(sessions, ledger=ledger, clock=clock)
        waivers = WaiverService(
            sessions, ledger=ledger, deny_rules=deny_rule_ids(bundle.modules), clock=clock
        )
        reevaluation = ReevaluationService(
            sessions=sessions,
            db=db,
            engine=engine,
            matrices=matrices,
            ledger=ledger,
            waivers_for=lambda keys: waivers.active_by_manifest(keys, clock.now()),
            events=events,
            policies=lambda: policies.bundle,
            clock=clock,
        )
        checkpointer = Checkpointer(settings, sessions, clock=clock)
        tracking = TrackingService(sessions, ledger=ledger, clock=clock)
        matrix_source = MatrixSourceService(
            settings, sessions=sessions, db=db, matrices=matrices, events=events, clock=clock
        )
        fleet = FleetService(sessions, clock=clock)
        metrics = Metrics(sessions, matrix_source=matrix_source)
        runtime = cls(
            settings=settings,
            db=db,
            sessions=sessions,
            policies=policies,
            bundles=bundles,
            engine=engine,
            events=events,
            ledger=ledger,
            matrices=matrices,
            matrix_source=matrix_source,
            keys=KeyService(sessions, clock=clock),
            limits=RequestLimits(settings.rate_limits, clock=clock),
            evaluations=EvaluationService(
                sessions=sessions,
                engine=engine,
                matrices=matrices,
                ledger=ledger,
                waivers=waivers,
                clock=clock,
            ),
            dry_runs=DryRunService(
                sessions=sessions, engine=engine, matrices=matrices, waivers=waivers, clock=clock
            ),
            tracking=tracking,
            fleet=fleet,
            audit=AuditService(sessions),
            alerts=AlertService(sessions),
            metrics=metrics,
            readiness=Readiness(
                db=db, engine=engine, ledger=ledger, matrices=matrices, clock=clock
            ),
            webhooks=WebhookService(
                sessions, clock=clock, allow=AllowList.parse(settings.webhook_allow)
            ),
            waivers=waivers,
            impact=ImpactAnalysis(
                sessions=sessions,
                policies=policies,
                matrices=matrices,
                waivers=waivers,
                clock=clock,
            ),
            reevaluation=reevaluation,
            sweeps=SweepScheduler(
                reevaluation,
                matrices,
                cron=settings.reevaluate_cron,
                waivers=waivers,
                policies=policies,
                matrix_source=matrix_source,
                clock=clock,
                events=events,
            ),
            clock=clock,
            checkpointer=checkpointer,
            proofs=ProofService(sessions, checkpointer),
            oscal=OscalReports(fleet=fleet, engine=engine, clock=clock),
        )
        react(runtime)
        return runtime

    def prepare_database(self, *, upgrade_schema: bool) -> None:
        if upgrade_schema:
            upgrade(self.settings.database_url)
        else:
            ensure_current(self.db)
        self.matrices.ensure_default(load_matrix_file(self.policies.bundle.default_matrix_path))

    def start(self, *, upgrade_schema: bool) -> None:
        self.prepare_database(upgrade_schema=upgrade_schema)
        self.checkpointer.start()  # first: a key that cannot be had refuses the start
        self.ledger.start()
        self.webhooks.dispatcher.start()
        self.reevaluation.start()
        self.sweeps.start()
        log.info(
            "supportgate_started",
            engine=self.engine.name,
            policy_revision=self.policies.bundle.revision,
            matrix_version=self.matrices.current().version,
        )

    start_in_thread = thread_twin(start)

    def stop(self) -> None:
        self.sweeps.stop()
        self.reevaluation.stop()
        self.webhooks.dispatcher.stop()
        self.ledger.stop()
        self.keys.flush_last_used(everything=True)
        self.checkpointer.stop()  # after the last write: signs it
        self.engine.close()
        self.db.dispose()

    stop_in_thread = thread_twin(stop)


def react(runtime: Runtime) -> None:
    """Every reaction to the events (supportgate/events.py), in the order they run."""
    on = runtime.events.on
    on(DecisionsRecorded, runtime.metrics.count_decisions)
    on(DeliveriesEnqueued, lambda _enqueued: runtime.webhooks.dispatcher.wake())
    on(HardwareRecorded, runtime.reevaluation.hardware_recorded)
    on(MatrixPublished, runtime.reevaluation.matrix_published)
    on(WaiverChanged, runtime.reevaluation.waiver_changed)
    # A new waiver may expire before the scheduler's next look: schedule its expiry now.
    on(WaiverChanged, lambda _changed: runtime.sweeps.tick())
    # A sweep's decisions are signed together, at its end (not only at the next interval).
    on(SweepEnded, lambda _ended: runtime.checkpointer.after_sweep())
    on(JobFailed, runtime.metrics.count_job_failure)
    on(PolicyReloadFailed, runtime.metrics.count_policy_reload_failure)
    on(PolicyReloadFailed, runtime.webhooks.policy_reload_failed)
