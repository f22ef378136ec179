"""Matrix versions: publishing, listing, and which one is current.

Only the current version is applied: among the published versions whose `effective_from`
has arrived (no `effective_from`: effective when published), the one that took effect last
(ties: the one published last). A version with a future `effective_from` becomes current at
that time. The versions are few and small, so they are cached in memory and reloaded after a
publish and every RELOAD_SECONDS (another replica may have published).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from service.db import MatrixVersion, transaction
from service.errors import ConflictError, PolicyEngineUnavailable
from service.manifests import Matrix, decode_matrix
from service.policy.engine import LoadedMatrix

from . import prepare
from .repository import all_versions, insert_version

RELOAD_SECONDS = 5.0
DEFAULT_PUBLISHER = "supportgate (default matrix)"


@dataclass(frozen=True, slots=True)
class PublishedMatrix:
    version: str
    effective_from: datetime | None
    published_at: datetime
    published_by: str | None
    loaded: LoadedMatrix

    @property
    def effective_at(self) -> datetime:
        return self.effective_from or self.published_at


class MatrixService:
    def __init__(
        self, sessions: sessionmaker[Session], *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._sessions = sessions
        self._clock = clock
        self._lock = threading.Lock()
        self._versions: list[PublishedMatrix] = []
        self._loaded_at = float("-inf")

    def ensure_default(self, default: Matrix) -> None:
        """Publish the default matrix when no version exists yet (a new database)."""
        if not self.versions(reload=True):
            with contextlib.suppress(ConflictError):  # another replica published it first
                self.publish(default, published_by=DEFAULT_PUBLISHER)

    def publish(self, matrix: Matrix, *, published_by: str | None) -> PublishedMatrix:
        loaded = prepare(matrix)
        with transaction(self._sessions, write=True) as session:
            row = insert_version(
                session,
                matrix,
                digest=loaded.key,
                published_by=published_by,
                now=datetime.now(UTC),
            )
            published = _published(row, loaded)
        self.versions(reload=True)
        return published

    def versions(self, *, reload: bool = False) -> list[PublishedMatrix]:
        """Every published version, oldest effective first."""
        now = self._clock()
        if reload or now - self._loaded_at > RELOAD_SECONDS:
            with transaction(self._sessions) as session:
                rows = all_versions(session)
                versions = [_published(row, _load(row)) for row in rows]
            versions.sort(key=lambda v: (v.effective_at, v.published_at))
            with self._lock:
                self._versions, self._loaded_at = versions, now
        with self._lock:
            return list(self._versions)

    def current(self, at: datetime | None = None) -> PublishedMatrix:
        moment = at or datetime.now(UTC)
        effective = [v for v in self.versions() if v.effective_at <= moment]
        if not effective:
            raise PolicyEngineUnavailable("no support matrix is in effect yet")
        return effective[-1]

    def get(self, version: str) -> PublishedMatrix | None:
        return next((v for v in self.versions() if v.version == version), None)


def _load(row: MatrixVersion) -> LoadedMatrix:
    return prepare(decode_matrix(msgspec.json.encode(row.document), fmt="json"))


def _published(row: MatrixVersion, loaded: LoadedMatrix) -> PublishedMatrix:
    return PublishedMatrix(
        version=row.version,
        effective_from=row.effective_from,
        published_at=row.published_at,
        published_by=row.published_by,
        loaded=loaded,
    )
