"""The timed triggers, on APScheduler 3 (the only module that imports it); time missed while
down, and the jobs of a tick that fail alone: docs/reevaluation.md."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.errors import UsageError
from supportgate.events import Events, JobFailed
from supportgate.logging import get_logger
from supportgate.matrix.services import MatrixService
from supportgate.policy.inputs import format_time
from supportgate.policy.live import LivePolicies
from supportgate.waivers.services import WaiverService

from .services import POLL_SECONDS, ReevaluationService

CRON_TRIGGER = "schedule:"
log = get_logger(__name__)
MISFIRE_GRACE_S = 3600
WAIVER_JOB = "waiver-expiry"


class MatrixSourcePoll(Protocol):
    @property
    def configured(self) -> bool: ...

    poll_seconds: float

    def poll(self, *, requested: bool = False) -> object: ...


class SweepScheduler:
    """tick() decides what is due against the clock (a test's fake one); APScheduler wakes it."""

    def __init__(
        self,
        reevaluation: ReevaluationService,
        matrices: MatrixService,
        *,
        cron: str,
        waivers: WaiverService | None = None,
        policies: LivePolicies | None = None,
        matrix_source: MatrixSourcePoll | None = None,
        clock: Clock = SYSTEM_CLOCK,
        events: Events | None = None,
    ) -> None:
        """`events`: where each job's failure is told (JobFailed)."""
        self._events = events or Events()
        self._reevaluation = reevaluation
        self._matrix_source = matrix_source
        self._matrices = matrices
        try:
            self._cron = CronTrigger.from_crontab(cron, timezone=UTC)
        except ValueError as exc:
            field = "SUPPORTGATE_REEVALUATE_CRON"
            raise UsageError(f"not a crontab line ({exc})", field=field) from exc
        self.waivers = waivers
        self._policies = policies
        self._clock = clock
        self._scheduler = BackgroundScheduler(timezone=UTC)
        # Ticks come from the scheduler and from waiver changes: one at a time past the reload,
        # so that a tick returns with what it found due asked for.
        self._lock = threading.Lock()
        self._cron_due: datetime | None = None
        self._waiver_at: datetime | None = None  # the wake-up scheduled for the next expiry

    def start(self) -> None:
        with self._lock:
            now = self._clock.now()
            self._cron_due = self._missed_cron(now) or self._cron.get_next_fire_time(None, now)
        jobs = self._scheduler
        jobs.add_job(
            self.tick, self._cron, id="cron", coalesce=True, misfire_grace_time=MISFIRE_GRACE_S
        )
        jobs.add_job(
            self.tick,
            IntervalTrigger(seconds=POLL_SECONDS, timezone=UTC),
            id="tick",
            coalesce=True,
            max_instances=1,
            next_run_time=datetime.now(UTC),  # APScheduler's own clock: wake up at once
        )
        source = self._matrix_source
        if source is not None and source.configured:
            jobs.add_job(
                lambda: self._attempt("matrix-source", lambda: source.poll(requested=True)),
                id="matrix-source-start",
            )
            jobs.add_job(
                lambda: self._attempt("matrix-source", source.poll),
                IntervalTrigger(seconds=source.poll_seconds, timezone=UTC),
                id="matrix-source",
                coalesce=True,
                max_instances=1,
            )
        jobs.start()

    def stop(self) -> None:
        if self._scheduler.running:
            self._scheduler.shutdown(wait=True)

    def tick(self) -> None:
        self._attempt("policy-reload", self._reload_policies)
        with self._lock:
            self._attempt("scheduled-sweep", self._run_due_cron)
            self._attempt("matrix-wakeups", self._schedule_matrix_versions)
            self._attempt(WAIVER_JOB, self._expire_waivers)
            self._attempt("matrix-activation", self._reevaluation.check_matrix)
        self._attempt("sweeper-wake", self._reevaluation.wake)

    def _attempt(self, job: str, run: Callable[[], object]) -> None:
        try:
            run()
        except Exception:  # the other jobs still run; this one is tried again next time
            log.exception("scheduler_job_failed", job=job)
            self._events.publish([JobFailed(job=job)])

    def _reload_policies(self) -> None:
        if self._policies is not None and self._policies.reload():
            self._reevaluation.policies_changed()

    def _missed_cron(self, now: datetime) -> datetime | None:
        """The first cron instant after the last cron sweep, when it has passed (none before
        the first cron sweep: a new service makes up nothing)."""
        last = self._reevaluation.latest_trigger(CRON_TRIGGER)
        if last is None:
            return None
        ran = datetime.fromisoformat(last.removeprefix(CRON_TRIGGER).replace("Z", "+00:00"))
        following = self._cron.get_next_fire_time(None, ran + timedelta(seconds=1))
        return following if following is not None and following <= now else None

    def _run_due_cron(self) -> None:
        """Instants missed meanwhile (a suspended process) coalesce into the latest, as
        APScheduler's `coalesce` would."""
        now = self._clock.now()
        due = self._cron_due
        if due is None or due > now:
            return
        following = self._cron.get_next_fire_time(due, now)
        while following is not None and following <= now:
            due, following = following, self._cron.get_next_fire_time(following, now)
        self._reevaluation.start_sweep("schedule", trigger=f"{CRON_TRIGGER}{format_time(due)}")
        self._cron_due = following

    def _schedule_matrix_versions(self) -> None:
        now = self._clock.now()
        for version in self._matrices.versions():
            job_id = f"matrix:{version.version}"
            if version.effective_at > now and self._scheduler.get_job(job_id) is None:
                self._scheduler.add_job(
                    self.tick,
                    DateTrigger(version.effective_at, timezone=UTC),
                    id=job_id,
                    misfire_grace_time=MISFIRE_GRACE_S,
                )

    def _expire_waivers(self) -> None:
        if self.waivers is None:
            return
        now = self._clock.now()
        expired = self.waivers.expired_unjudged(now)
        if expired is not None:
            latest, manifests = expired
            self._reevaluation.start_sweep(
                "waiver", trigger=f"waiver:{format_time(latest)}", only=manifests
            )
        moment = self.waivers.next_expiry(now)
        if moment == self._waiver_at:
            return
        if moment is None:
            if self._scheduler.get_job(WAIVER_JOB) is not None:
                self._scheduler.remove_job(WAIVER_JOB)
        else:
            self._scheduler.add_job(
                self.tick,
                DateTrigger(moment + timedelta(seconds=1), timezone=UTC),
                id=WAIVER_JOB,
                replace_existing=True,
                misfire_grace_time=MISFIRE_GRACE_S,
            )
        self._waiver_at = moment
