"""The timed triggers, on APScheduler 3 (the only module that imports it):

- the cron (SUPPORTGATE_REEVALUATE_CRON, UTC): a sweep with cause `schedule`, its trigger
  the minute it fired for, so replicas firing together start one sweep;
- a matrix version's `effective_from`: at that moment, the sweep for the version (cause
  `matrix`);
- the next waiver expiry (`WaiverService.next_expiry`, when the waivers domain is wired):
  at that moment a sweep with cause `waiver`;
- every POLL_SECONDS: look again (versions or waivers another replica published, a current
  version no sweep judged under yet) and wake the worker (sweeps to resume).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from supportgate.errors import UsageError
from supportgate.logging import get_logger
from supportgate.matrix.services import MatrixService

from .services import POLL_SECONDS, ReevaluationService

log = get_logger(__name__)
MISFIRE_GRACE_S = 3600
WAIVER_JOB = "waiver-expiry"


class WaiverExpiry(Protocol):
    def next_expiry(self, after: datetime) -> datetime | None: ...


def cron_trigger(expression: str) -> CronTrigger:
    """The trigger for a five-field crontab line, in UTC (a bad line is a UsageError)."""
    try:
        return CronTrigger.from_crontab(expression, timezone=UTC)
    except ValueError as exc:
        raise UsageError(
            f"not a crontab line ({exc})", field="SUPPORTGATE_REEVALUATE_CRON"
        ) from exc


class SweepScheduler:
    def __init__(
        self,
        reevaluation: ReevaluationService,
        matrices: MatrixService,
        *,
        cron: str,
        waivers: WaiverExpiry | None = None,
    ) -> None:
        self._reevaluation = reevaluation
        self._matrices = matrices
        self._cron = cron_trigger(cron)
        self.waivers = waivers
        self._scheduler = BackgroundScheduler(timezone=UTC)
        self._waiver_at: datetime | None = None

    def start(self) -> None:
        jobs = self._scheduler
        jobs.add_job(
            self._scheduled,
            self._cron,
            id="cron",
            coalesce=True,
            misfire_grace_time=MISFIRE_GRACE_S,
        )
        jobs.add_job(
            self.tick,
            IntervalTrigger(seconds=POLL_SECONDS, timezone=UTC),
            id="tick",
            coalesce=True,
            max_instances=1,
            next_run_time=datetime.now(UTC),
        )
        jobs.start()

    def stop(self) -> None:
        if self._scheduler.running:
            self._scheduler.shutdown(wait=True)

    def tick(self) -> None:
        """Look again: pending matrix versions, the next waiver expiry, the current version."""
        try:
            self._schedule_matrix_versions()
            self._schedule_waiver_expiry()
            self._reevaluation.check_matrix()
        except Exception:  # the next tick tries again
            log.exception("sweep_schedule_error")
        self._reevaluation.wake()

    def _scheduled(self) -> None:
        minute = datetime.now(UTC).replace(second=0, microsecond=0)
        self._reevaluation.start_sweep("schedule", trigger=f"schedule:{_text(minute)}")

    def _schedule_matrix_versions(self) -> None:
        now = datetime.now(UTC)
        for version in self._matrices.versions():
            job_id = f"matrix:{version.version}"
            if version.effective_at > now and self._scheduler.get_job(job_id) is None:
                self._scheduler.add_job(
                    self._reevaluation.check_matrix,
                    DateTrigger(version.effective_at, timezone=UTC),
                    id=job_id,
                    misfire_grace_time=MISFIRE_GRACE_S,
                )

    def _schedule_waiver_expiry(self) -> None:
        if self.waivers is None:
            return
        moment = self.waivers.next_expiry(datetime.now(UTC))
        if moment == self._waiver_at:
            return
        self._waiver_at = moment
        if moment is None:
            if self._scheduler.get_job(WAIVER_JOB) is not None:
                self._scheduler.remove_job(WAIVER_JOB)
            return
        self._scheduler.add_job(
            self._waiver_expired,
            DateTrigger(moment + timedelta(seconds=1), timezone=UTC),
            args=[moment],
            id=WAIVER_JOB,
            replace_existing=True,
            misfire_grace_time=MISFIRE_GRACE_S,
        )

    def _waiver_expired(self, moment: datetime) -> None:
        self._reevaluation.start_sweep("waiver", trigger=f"waiver:{_text(moment)}")
        self._waiver_at = None
        self._schedule_waiver_expiry()


def _text(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
