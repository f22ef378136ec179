"""Following the support matrix where it is kept (SUPPORTGATE_MATRIX_SOURCE): a sync as
docs/matrix-sources.md ("What a sync does") describes it. A failure not told already is
enqueued for the webhook subscribers in the same transaction as its record (the outbox)."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path
from typing import Literal, cast
from uuid import uuid4

import msgspec
from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.config import Settings
from supportgate.db import MatrixSourceState, transaction
from supportgate.db.engine import absent_sqlite_database, database_url
from supportgate.db.locks import advisory_lock
from supportgate.errors import ConflictError, ManifestError
from supportgate.events import DeliveriesEnqueued, Events
from supportgate.ledger.batches import Provenance
from supportgate.logging import get_logger
from supportgate.manifests import decode_matrix, to_builtins
from supportgate.matrix.services import MatrixService
from supportgate.policy.engine import matrix_key
from supportgate.policy.inputs import format_time
from supportgate.threads import in_thread, thread_twin
from supportgate.webhooks.outbox import SYNC_FAILED, enqueue_event_deliveries

from . import repository
from .fetch import Fetched, NoDocument, Reader, SourceUnreachable, Unchanged
from .git import GitReader
from .https import HttpsReader
from .spec import GitSource, Source, parse_source
from .views import ErrorKind, MatrixSourceView, SourceKind, SyncError

log = get_logger(__name__)

SOURCE_LOCK_KEY = 0x5347_4D53  # "SGMS": the advisory lock id of "a matrix source sync runs"
PUBLISHER = "supportgate (matrix source)"
CACHE_DIR_NAME = "supportgate-matrix-cache"

SyncOutcome = Literal["published", "unchanged", "failed", "skipped"]


@dataclass(frozen=True, slots=True)
class _Failure:
    kind: ErrorKind
    message: str
    field: str | None
    revision: str | None


class MatrixSourceService:
    def __init__(
        self,
        settings: Settings,
        *,
        sessions: sessionmaker[Session],
        db: Engine,
        matrices: MatrixService,
        events: Events,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        """No SUPPORTGATE_MATRIX_SOURCE: every sync is `skipped`."""
        self.source = parse_source(settings.matrix_source) if settings.matrix_source else None
        self._reader: Reader | None = None
        if isinstance(self.source, GitSource):
            self._reader = GitReader(
                self.source, cache_dir(settings), deadline=settings.matrix_fetch_timeout
            )
        elif self.source is not None:
            self._reader = HttpsReader(
                self.source,
                deadline=settings.matrix_fetch_timeout,
                ca_file=settings.matrix_ca_file,
            )
        self.poll_seconds = settings.matrix_poll
        self._sessions = sessions
        self._db = db
        self._matrices = matrices
        self._events = events
        self._clock = clock
        self._running = threading.Lock()

    @property
    def configured(self) -> bool:
        return self.source is not None

    def poll(self, *, requested: bool = False) -> SyncOutcome:
        """A sync in the background (the scheduler's, the start's, POST /v1/matrix/sync's):
        never raises, the next poll tries again."""
        try:
            return self.sync(requested=requested)
        except Exception:  # a database or engine outage: the next poll tries again
            log.exception("matrix_source_poll_failed")
            return "skipped"

    poll_in_thread = thread_twin(poll)

    def sync(self, *, requested: bool = True) -> SyncOutcome:
        if self.source is None or self._reader is None:
            return "skipped"
        if not self._running.acquire(blocking=False):
            return "skipped"  # this process syncs already
        try:
            with advisory_lock(self._db, SOURCE_LOCK_KEY) as held:
                return (
                    self._sync(self.source, self._reader, requested=requested)
                    if held
                    else "skipped"
                )
        finally:
            self._running.release()

    def _sync(self, source: Source, reader: Reader, *, requested: bool) -> SyncOutcome:
        with transaction(self._sessions) as session:
            row = repository.state(session, source.shown)
        known = row.revision if row is not None else None
        now = self._clock.now()
        last = row.last_sync_at if row is not None else None
        if (
            not requested
            and last is not None
            and now - last < timedelta(seconds=self.poll_seconds / 2)
        ):
            return "skipped"
        try:
            read = reader.read(known)
        except (SourceUnreachable, OSError) as exc:  # OSError: the cache, or git, unusable here
            return self._failed(_Failure("unreachable", str(exc), None, None), version=None)
        except NoDocument as exc:
            return self._failed(_Failure("invalid", str(exc), None, exc.revision), version=None)
        if isinstance(read, Unchanged):
            kept = _kept_error(row)
            if kept is not None and kept.kind != "unreachable":
                # The same content as last time: it fails as it did (and is not told again).
                return self._failed(kept, version=row.version if row else None)
            self._record(revision=None, version=None)
            return "unchanged"
        return self._publish(source, read)

    def _publish(self, source: Source, read: Fetched) -> SyncOutcome:
        try:
            matrix = decode_matrix(read.content, fmt=read.fmt, source=source.shown)
        except ManifestError as exc:
            return self._failed(
                _Failure("invalid", exc.message, exc.field, read.revision), version=None
            )
        provenance = Provenance(
            source=source.shown, revision=read.revision, fetched_at=self._clock.now()
        )
        self._matrices.versions(reload=True)  # another replica, or the API, may have published
        # (a reload reads only the versions this process does not hold yet)
        if self._matrices.get(matrix.version) is None:
            try:
                self._matrices.publish(matrix, published_by=PUBLISHER, provenance=provenance)
            except ConflictError:
                self._matrices.versions(reload=True)  # published meanwhile: judged below
            else:
                log.info(
                    "matrix_source_published",
                    source=source.shown,
                    revision=read.revision,
                    matrix_version=matrix.version,
                )
                self._record(
                    revision=read.revision, version=matrix.version, published=matrix.version
                )
                return "published"
        existing = self._matrices.get(matrix.version)
        if existing is not None and existing.loaded.key != matrix_key(to_builtins(matrix)):
            return self._failed(
                _Failure(
                    "conflict",
                    f"matrix version {matrix.version!r} is already published with other "
                    "content; versions are never edited in place, give the change a new version",
                    "$.version",
                    read.revision,
                ),
                version=matrix.version,
            )
        self._record(revision=read.revision, version=matrix.version)
        return "unchanged"

    def _failed(self, failure: _Failure, *, version: str | None) -> SyncOutcome:
        log.warning(
            "matrix_source_sync_failed",
            source=self.source.shown if self.source else None,
            kind=failure.kind,
            error=failure.message,
            revision=failure.revision,
        )
        self._record(revision=failure.revision, version=version, failure=failure)
        return "failed"

    def _record(
        self,
        *,
        revision: str | None,
        version: str | None,
        failure: _Failure | None = None,
        published: str | None = None,
    ) -> None:
        """`revision` None: nothing new was read."""
        assert self.source is not None  # noqa: S101 - only a configured source syncs
        shown = self.source.shown
        now = self._clock.now()
        enqueued = 0
        with transaction(self._sessions, write=True) as session:
            row = repository.state(session, shown) or MatrixSourceState(source=shown)
            row.last_sync_at = now
            if revision is not None:
                row.revision, row.version = revision, version
            if published is not None:
                row.last_published_version, row.last_published_at = published, now
            if failure is None:
                row.last_success_at = now
                row.error_kind = row.error_message = row.error_field = None
                row.error_revision = row.error_at = None
                row.consecutive_failures = 0
            else:
                told = (row.error_kind, row.error_message, row.error_revision)
                if told != (failure.kind, failure.message, failure.revision):
                    row.error_kind, row.error_message = failure.kind, failure.message
                    row.error_field, row.error_revision = failure.field, failure.revision
                    row.error_at = now
                    enqueued = enqueue_event_deliveries(
                        session,
                        event_type=SYNC_FAILED,
                        event_id=f"sync_{uuid4()}",
                        at=format_time(now),
                        data=_event_data(row),
                        now=now,
                    )
                row.consecutive_failures += 1
                row.failures_total += 1
            repository.save(session, row)
        if enqueued:
            self._events.publish([DeliveriesEnqueued(count=enqueued)])

    def view(self) -> MatrixSourceView:
        if self.source is None:
            return _view(None, None, self.poll_seconds, None)
        with transaction(self._sessions) as session:
            row = repository.state(session, self.source.shown)
        kind: SourceKind = "git" if isinstance(self.source, GitSource) else "https"
        return _view(self.source.shown, kind, self.poll_seconds, row)

    view_in_thread = thread_twin(view)

    @in_thread
    def requested_view(self) -> MatrixSourceView:
        """POST /v1/matrix/sync: the state as it is before the sync it asks for."""
        if self.source is None:
            raise ConflictError(
                "no matrix source is configured; set it to follow the matrix in git or at an "
                "https URL",
                field="SUPPORTGATE_MATRIX_SOURCE",
            )
        return self.view()


def cache_dir(settings: Settings) -> Path:
    """SUPPORTGATE_MATRIX_CACHE_DIR, else `supportgate-matrix-cache` beside the SQLite file,
    else (PostgreSQL, an in-memory database) in the working directory."""
    if settings.matrix_cache_dir is not None:
        return settings.matrix_cache_dir
    url = database_url(settings.database_url)
    database = url.database or ""
    if url.get_backend_name() == "sqlite" and not database.startswith("file:"):
        absent = absent_sqlite_database(settings.database_url)
        if absent is None or not absent.in_memory:
            return Path(database).parent / CACHE_DIR_NAME
    return Path(CACHE_DIR_NAME)


def _event_data(row: MatrixSourceState) -> dict[str, object]:
    """The `data` of a `matrix.sync_failed` event (docs/webhooks.md)."""
    return {
        "source": row.source,
        "error": {
            "kind": row.error_kind,
            "message": row.error_message,
            "field": row.error_field,
            "revision": row.error_revision,
        },
        "consecutive_failures": row.consecutive_failures + 1,
        "last_success_at": None
        if row.last_success_at is None
        else format_time(row.last_success_at),
    }


def _kept_error(row: MatrixSourceState | None) -> _Failure | None:
    if row is None or row.error_kind is None:
        return None
    kind = cast(ErrorKind, row.error_kind)  # the row is written from an ErrorKind only
    return _Failure(kind, row.error_message or "", row.error_field, row.error_revision)


def _view(
    source: str | None,
    kind: SourceKind | None,
    poll_seconds: float,
    row: MatrixSourceState | None,
) -> MatrixSourceView:
    kept = _kept_error(row)
    row = row or MatrixSourceState(source=source or "")  # never synced: every column empty
    error = None
    if kept is not None and row.error_at is not None:
        error = SyncError(**asdict(kept), at=row.error_at)
    given = {"source": source, "kind": kind, "poll_seconds": poll_seconds, "last_error": error}
    return msgspec.convert({**row.model_dump(), **given}, MatrixSourceView)
