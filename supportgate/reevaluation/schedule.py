"""The timed triggers, on APScheduler 3 (the only module that imports it):

- the cron (SUPPORTGATE_REEVALUATE_CRON, UTC): a sweep with cause `schedule`, its trigger
  the minute it fired for, so replicas firing together start one sweep;
- a matrix version's `effective_from`: at that moment, the sweep for the version (cause
  `matrix`);
- the next waiver expiry (`WaiverService.next_expiry`, when the waivers domain is wired):
  at that moment a sweep with cause `waiver`;
- every POLL_SECONDS: reload the policies when their files changed (a changed organisation
  bundle that passes its check: a sweep with cause `policy`; policy/live.py), look again
  (versions or waivers another replica published, a current version no sweep judged under
  yet) and wake the worker (sweeps to resume);
- the matrix source (SUPPORTGATE_MATRIX_SOURCE, when set): a sync at start, then a poll every
  SUPPORTGATE_MATRIX_POLL (supportgate/matrix_sources/: one sync at a time across replicas,
  and about one poll an interval between them).

Each is decided by SweepScheduler.tick() against the clock (supportgate.clock); APScheduler's
jobs only call tick() at the right moments.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.errors import UsageError
from supportgate.logging import get_logger
from supportgate.matrix.services import MatrixService

from .services import POLL_SECONDS, ReevaluationService

log = get_logger(__name__)
MISFIRE_GRACE_S = 3600
WAIVER_JOB = "waiver-expiry"


class WaiverExpiry(Protocol):
    def next_expiry(self, after: datetime) -> datetime | None: ...


class PolicyReload(Protocol):
    def reload(self) -> bool: ...


class MatrixSourcePoll(Protocol):
    """supportgate.matrix_sources.services.MatrixSourceService, as the scheduler sees it."""

    @property
    def configured(self) -> bool: ...

    poll_seconds: float

    def poll(self, *, requested: bool = False) -> object: ...


def cron_trigger(expression: str) -> CronTrigger:
    """The trigger for a five-field crontab line, in UTC (a bad line is a UsageError)."""
    try:
        return CronTrigger.from_crontab(expression, timezone=UTC)
    except ValueError as exc:
        raise UsageError(
            f"not a crontab line ({exc})", field="SUPPORTGATE_REEVALUATE_CRON"
        ) from exc


class SweepScheduler:
    """Starts the timed sweeps. What is due is decided by tick() against the clock; APScheduler
    only wakes it (every POLL_SECONDS, on the cron's instants, at a pending version's
    `effective_from`, just after the next waiver expiry). So a test moves a fake clock and
    calls tick() rather than wait for a minute or an expiry to pass."""

    def __init__(
        self,
        reevaluation: ReevaluationService,
        matrices: MatrixService,
        *,
        cron: str,
        waivers: WaiverExpiry | None = None,
        policies: PolicyReload | None = None,
        matrix_source: MatrixSourcePoll | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._reevaluation = reevaluation
        self._matrix_source = matrix_source
        self._matrices = matrices
        self._cron = cron_trigger(cron)
        self.waivers = waivers
        self._policies = policies
        self._clock = clock
        self._scheduler = BackgroundScheduler(timezone=UTC)
        self._lock = threading.Lock()  # ticks come from the scheduler and from waiver changes
        self._cron_due: datetime | None = None
        self._waiver_at: datetime | None = None

    def start(self) -> None:
        with self._lock:
            self._cron_due = self._cron.get_next_fire_time(None, self._clock.now())
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
            jobs.add_job(lambda: source.poll(requested=True), id="matrix-source-start")
            jobs.add_job(
                source.poll,
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
        """Start what is due (the cron's sweep, a waiver expiry's), wake up for what is coming
        (pending matrix versions, the next waiver expiry), and look at the current version."""
        try:
            if self._policies is not None and self._policies.reload():
                self._reevaluation.policies_changed()
            with self._lock:
                now = self._clock.now()
                self._run_due_cron(now)
                self._schedule_matrix_versions(now)
                self._schedule_waiver_expiry(now)
            self._reevaluation.check_matrix()
        except Exception:  # the next tick tries again
            log.exception("sweep_schedule_error")
        self._reevaluation.wake()

    def _run_due_cron(self, now: datetime) -> None:
        """The sweep of the latest cron instant that has come: instants missed meanwhile (a
        suspended process) coalesce into it, as APScheduler's `coalesce` would."""
        due = self._cron_due
        if due is None or due > now:
            return
        following = self._cron.get_next_fire_time(due, now)
        while following is not None and following <= now:
            due, following = following, self._cron.get_next_fire_time(following, now)
        self._reevaluation.start_sweep("schedule", trigger=f"schedule:{_text(due)}")
        self._cron_due = following

    def _schedule_matrix_versions(self, now: datetime) -> None:
        for version in self._matrices.versions():
            job_id = f"matrix:{version.version}"
            if version.effective_at > now and self._scheduler.get_job(job_id) is None:
                self._scheduler.add_job(
                    self.tick,
                    DateTrigger(version.effective_at, timezone=UTC),
                    id=job_id,
                    misfire_grace_time=MISFIRE_GRACE_S,
                )

    def _schedule_waiver_expiry(self, now: datetime) -> None:
        if self.waivers is None:
            return
        expired = self._waiver_at
        if expired is not None and expired <= now:
            self._reevaluation.start_sweep("waiver", trigger=f"waiver:{_text(expired)}")
        moment = self.waivers.next_expiry(now)
        if moment == self._waiver_at:
            return
        self._waiver_at = moment
        if moment is None:
            if self._scheduler.get_job(WAIVER_JOB) is not None:
                self._scheduler.remove_job(WAIVER_JOB)
            return
        self._scheduler.add_job(
            self.tick,
            DateTrigger(moment + timedelta(seconds=1), timezone=UTC),
            id=WAIVER_JOB,
            replace_existing=True,
            misfire_grace_time=MISFIRE_GRACE_S,
        )


def _text(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
