"""Matrix versions: publishing, listing, and which one is current (the one whose
`effective_from`, else publication, came last and has arrived).

The versions are few and small, so they are held in memory; a reload (after a publish, and
every RELOAD_SECONDS: another replica may have published) reads the digests, and the
documents of versions not held yet. Versions are never edited in place, so each is read and
prepared once per process. Publishing is a write of the ledger (its event starts the sweep).
"""

from __future__ import annotations

import contextlib
import getpass
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import MatrixVersion, transaction
from supportgate.errors import ConflictError, PolicyEngineUnavailable
from supportgate.ledger.batches import Batch, MatrixPublication, Provenance
from supportgate.ledger.writer import LedgerWriter
from supportgate.logging import get_logger
from supportgate.manifests import Format, Matrix, decode_matrix, to_builtins
from supportgate.policy.engine import LoadedMatrix
from supportgate.threads import in_thread, thread_twin

from . import prepare
from .repository import digests, versions_named
from .views import MatrixProvenance, MatrixVersionDetail, MatrixVersionList, MatrixVersionSummary

log = get_logger(__name__)

RELOAD_SECONDS = 5.0
DEFAULT_PUBLISHER = "supportgate (default matrix)"


@dataclass(frozen=True, slots=True)
class PublishedMatrix:
    version: str
    effective_from: datetime | None
    published_at: datetime
    published_by: str | None
    provenance: MatrixProvenance | None
    loaded: LoadedMatrix

    @property
    def effective_at(self) -> datetime:
        return self.effective_from or self.published_at


class MatrixService:
    def __init__(
        self, sessions: sessionmaker[Session], *, ledger: LedgerWriter, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self._sessions = sessions
        self._ledger = ledger
        self._clock = clock
        self._lock = threading.Lock()
        self._reloading = threading.Lock()
        self._versions: list[PublishedMatrix] = []
        self._writing: dict[str, PublishedMatrix] = {}
        """Versions this process is publishing: a reload takes them as written, unread."""
        self._loaded_at = float("-inf")

    def ensure_default(self, default: Matrix) -> None:
        if not self.versions(reload=True):
            with contextlib.suppress(ConflictError):  # another replica published it first
                self.publish(default, published_by=DEFAULT_PUBLISHER)

    def publish(
        self, matrix: Matrix, *, published_by: str | None, provenance: Provenance | None = None
    ) -> PublishedMatrix:
        """`provenance`: where a version read from a matrix source was read from."""
        loaded = prepare(matrix)
        publication = MatrixPublication(
            version=matrix.version,
            document=to_builtins(matrix),
            digest=loaded.key,
            effective_from=matrix.effective_from,
            published_at=self._clock.now(),
            published_by=published_by,
            provenance=provenance,
        )
        published = _published(publication, loaded)
        with self._lock:
            self._writing[matrix.version] = published
        try:
            applied = self._ledger.write(Batch(matrices=[publication]))
            if applied.conflicts_in("matrix"):
                with self._lock:  # another publication of that version: read that one
                    self._writing.pop(matrix.version, None)
            self.versions(reload=True)
        finally:
            with self._lock:
                self._writing.pop(matrix.version, None)
        if applied.conflicts_in("matrix"):
            raise ConflictError(
                f"matrix version {matrix.version!r} is already published; versions are never "
                "edited in place, publish a new version",
                field="$.version",
            )
        return published

    def versions(self, *, reload: bool = False) -> list[PublishedMatrix]:
        """Every published version, oldest effective first."""
        now = self._clock.monotonic()
        # One reload at a time: while one is under way, the others answer from the versions
        # held (a first load, or an explicit reload, waits for its turn).
        stale = reload or now - self._loaded_at > RELOAD_SECONDS
        if stale and self._reloading.acquire(blocking=reload or not self._versions):
            try:
                self._read(now)
            finally:
                self._reloading.release()
        with self._lock:
            return list(self._versions)

    def _read(self, now: float) -> None:
        with self._lock:
            held = {v.version: v for v in (*self._versions, *self._writing.values())}
        with transaction(self._sessions) as session:
            listed = digests(session)
            versions = [
                held[version]
                for version, digest in listed.items()
                if version in held and held[version].loaded.key == digest
            ]
            unread = sorted(set(listed) - {v.version for v in versions})
            if unread:
                rows = versions_named(session, unread)
                versions += [_published(row, _load(row)) for row in rows]
        versions.sort(key=lambda v: (v.effective_at, v.published_at))
        with self._lock:
            self._versions, self._loaded_at = versions, now

    def current(self, at: datetime | None = None) -> PublishedMatrix:
        found = _in_effect(self.versions(), at or self._clock.now())
        if found is None:
            raise PolicyEngineUnavailable("no support matrix is in effect yet")
        return found

    def get(self, version: str) -> PublishedMatrix | None:
        return next((v for v in self.versions() if v.version == version), None)

    @in_thread
    def publish_document(
        self, data: bytes, *, fmt: Format, published_by: str | None
    ) -> MatrixVersionDetail:
        view = self.publish_view(decode_matrix(data, fmt=fmt), published_by=published_by)
        log.info(
            "matrix_published",
            matrix_version=view.version,
            effective_from=view.effective_from,
            published_by=view.published_by,
            current=view.current,
            pending=view.pending,
        )
        return view

    def publish_view(self, matrix: Matrix, *, published_by: str | None) -> MatrixVersionDetail:
        published = self.publish(matrix, published_by=published_by)
        return self._detail(published, self._clock.now())

    def current_view(self) -> MatrixVersionDetail:
        now = self._clock.now()
        return self._detail(self.current(now), now)

    current_view_in_thread = thread_twin(current_view)

    def version_view(self, version: str) -> MatrixVersionDetail | None:
        found = self.get(version)
        return None if found is None else self._detail(found, self._clock.now())

    version_view_in_thread = thread_twin(version_view)

    def version_list(self) -> MatrixVersionList:
        """Every version, newest effective first (pending versions lead)."""
        now = self._clock.now()
        versions = self.versions()
        current = _in_effect(versions, now)
        return MatrixVersionList(items=[_summary(v, now, current) for v in reversed(versions)])

    version_list_in_thread = thread_twin(version_list)

    def _detail(self, published: PublishedMatrix, now: datetime) -> MatrixVersionDetail:
        summary = _summary(published, now, _in_effect(self.versions(), now))
        return MatrixVersionDetail(
            **msgspec.structs.asdict(summary), document=dict(published.loaded.document)
        )


def describe(view: MatrixVersionSummary) -> str:
    if view.current:
        state = "current now"
    elif view.pending and view.effective_from is not None:
        state = f"pending, takes effect {view.effective_from.isoformat().replace('+00:00', 'Z')}"
    else:
        state = "never applied: a version with a later effective_from is current"
    return f"published matrix version {view.version} ({state})"


def cli_publisher() -> str:
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no login name in this environment
        return "supportgate cli"
    return f"supportgate cli ({user})"


def _in_effect(versions: list[PublishedMatrix], moment: datetime) -> PublishedMatrix | None:
    """The version applied at `moment`: `versions` are sorted oldest effective first."""
    effective = [v for v in versions if v.effective_at <= moment]
    return effective[-1] if effective else None


def _summary(
    published: PublishedMatrix, now: datetime, current: PublishedMatrix | None
) -> MatrixVersionSummary:
    return MatrixVersionSummary(
        version=published.version,
        effective_from=published.effective_from,
        published_at=published.published_at,
        published_by=published.published_by,
        provenance=published.provenance,
        current=current is not None and published.version == current.version,
        pending=published.effective_at > now,
    )


def _load(row: MatrixVersion) -> LoadedMatrix:
    return prepare(decode_matrix(msgspec.json.encode(row.document), fmt="json"))


def _published(row: MatrixVersion | MatrixPublication, loaded: LoadedMatrix) -> PublishedMatrix:
    return PublishedMatrix(
        version=row.version,
        effective_from=row.effective_from,
        published_at=row.published_at,
        published_by=row.published_by,
        provenance=_provenance(row.provenance),
        loaded=loaded,
    )


def _provenance(kept: Provenance | dict[str, Any] | None) -> MatrixProvenance | None:
    if kept is None:
        return None
    document = kept.document() if isinstance(kept, Provenance) else kept
    return msgspec.json.decode(msgspec.json.encode(document), type=MatrixProvenance)
