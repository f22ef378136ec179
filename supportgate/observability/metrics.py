"""Prometheus metrics, in a registry of the app's own (so tests can build many apps).

Counters count what this process did. Gauges are read from the database when scraped, so every
replica reports the same, current numbers; one the database cannot answer is left out of that
scrape, so the others are still served.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import Manifest, table_of, transaction
from supportgate.events import DecisionsRecorded, JobFailed, PolicyReloadFailed
from supportgate.logging import get_logger, lost_log_lines
from supportgate.matrix_sources.services import MatrixSourceService
from supportgate.reevaluation import repository as sweep_repository
from supportgate.threads import in_thread
from supportgate.webhooks import repository as webhook_repository

MEDIA_TYPE = "text/plain; version=0.0.4"
"""Prometheus text format; the HTTP layer adds `; charset=utf-8` to every text/ type."""
_manifests = table_of(Manifest)
log = get_logger(__name__)


@dataclass(eq=False)  # the registry keys collectors by identity
class _FromDatabase(Collector):
    sessions: sessionmaker[Session]
    read: Callable[[Session], Iterable[GaugeMetricFamily]]
    unavailable: str

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            with transaction(self.sessions) as session:
                families = list(self.read(session))
        except DBAPIError as exc:  # the other metrics still matter (most of all now)
            log.warning(self.unavailable, error=type(exc.orig).__name__)
            return
        yield from families


def _tracked_manifests(session: Session) -> Iterator[GaugeMetricFamily]:
    family = GaugeMetricFamily(
        "supportgate_tracked_manifests",
        "Tracked manifests by their current verdict",
        labels=["verdict"],
    )
    counts = {"supported": 0, "experimental": 0, "rejected": 0}
    statement = select(_manifests.c.latest_verdict, func.count()).group_by(
        _manifests.c.latest_verdict
    )
    for verdict, count in session.execute(statement):
        if verdict in counts:
            counts[verdict] = int(count)
    for verdict, count in counts.items():
        family.add_metric([verdict], count)
    yield family


def _pending_webhook_deliveries(session: Session) -> Iterator[GaugeMetricFamily]:
    yield GaugeMetricFamily(
        "supportgate_webhook_deliveries_pending",
        "Webhook deliveries waiting for a (first or next) attempt",
        value=sum(webhook_repository.pending_counts(session).values()),
    )


def _last_sweep(session: Session) -> Iterator[GaugeMetricFamily]:
    last = sweep_repository.latest_finished(session)
    if last is None or last.finished_at is None or last.started_at is None:
        return
    for name, help_text, value in (
        (
            "supportgate_last_sweep_timestamp_seconds",
            "When the last re-evaluation sweep finished (Unix time)",
            last.finished_at.timestamp(),
        ),
        (
            "supportgate_last_sweep_duration_seconds",
            "How long the last re-evaluation sweep ran",
            (last.finished_at - last.started_at).total_seconds(),
        ),
        (
            "supportgate_last_sweep_changed",
            "Decisions the last re-evaluation sweep recorded (decisions that changed)",
            float(last.changed),
        ),
        (
            "supportgate_last_sweep_evaluated",
            "Manifests the last re-evaluation sweep evaluated",
            float(last.evaluated),
        ),
    ):
        yield GaugeMetricFamily(name, help_text, value=value)


@dataclass(eq=False)  # the registry keys collectors by identity
class _MatrixSource(Collector):
    source: MatrixSourceService

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        if not self.source.configured:
            return
        try:
            view = self.source.view()
        except DBAPIError as exc:
            log.warning("matrix_source_unavailable", error=type(exc.orig).__name__)
            return
        for name, help_text, moment in (
            (
                "supportgate_matrix_source_last_sync_timestamp_seconds",
                "When a sync of the matrix source last ended, whatever its outcome (Unix time)",
                view.last_sync_at,
            ),
            (
                "supportgate_matrix_source_last_success_timestamp_seconds",
                "When a sync of the matrix source last succeeded (Unix time)",
                view.last_success_at,
            ),
        ):
            if moment is not None:
                yield GaugeMetricFamily(name, help_text, value=moment.timestamp())
        yield GaugeMetricFamily(
            "supportgate_matrix_source_consecutive_failures",
            "Syncs of the matrix source that failed since the last that succeeded",
            value=view.consecutive_failures,
        )
        yield CounterMetricFamily(
            "supportgate_matrix_source_failures",
            "Syncs of the matrix source that published nothing: unreachable, invalid, conflict",
            value=view.failures_total,
        )


class _LostLogLines(Collector):
    def collect(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily(
            "supportgate_log_lines_lost",
            "Log lines that could not be written (the log's disk full, stdout closed)",
            value=lost_log_lines(),
        )


class Metrics:
    def __init__(
        self, sessions: sessionmaker[Session], *, matrix_source: MatrixSourceService
    ) -> None:
        self.registry = CollectorRegistry()
        self.request_duration = Histogram(
            "supportgate_http_request_duration_seconds",
            "HTTP request latency",
            ["method", "route", "status"],
            registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
        )
        self.decisions = Counter(
            "supportgate_decisions_total",
            "Decisions recorded",
            ["verdict", "cause"],
            registry=self.registry,
        )
        self.policy_reload_failures = Counter(
            "supportgate_policy_reload_failures",
            "Changed policy files refused (the last good revision kept)",
            registry=self.registry,
        )
        self.job_failures = Counter(
            "supportgate_scheduler_job_failures",
            "Runs of a scheduler job that failed (it is tried again at its next run)",
            ["job"],
            registry=self.registry,
        )
        for read, unavailable in (
            (_tracked_manifests, "tracked_manifests_unavailable"),
            (_pending_webhook_deliveries, "webhook_deliveries_unavailable"),
            (_last_sweep, "last_sweep_unavailable"),
        ):
            self.registry.register(_FromDatabase(sessions, read, unavailable=unavailable))
        self.registry.register(_MatrixSource(matrix_source))
        self.registry.register(_LostLogLines())

    def count_decisions(self, recorded: DecisionsRecorded) -> None:
        for count in recorded.counts:
            self.decisions.labels(count.verdict, count.cause).inc(count.count)

    def count_policy_reload_failure(self, _failed: PolicyReloadFailed) -> None:
        self.policy_reload_failures.inc()

    def count_job_failure(self, failed: JobFailed) -> None:
        self.job_failures.labels(failed.job).inc()

    @in_thread
    def exposition(self) -> bytes:
        return generate_latest(self.registry)
