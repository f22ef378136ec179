from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

ErrorKind = Literal["unreachable", "invalid", "conflict"]
SourceKind = Literal["git", "https"]


class SyncError(msgspec.Struct, frozen=True, kw_only=True):
    """Why the last sync published nothing: `unreachable` (the source could not be read),
    `invalid` (its content is no valid matrix; `field` names the failing field), `conflict`
    (its `version` is published already with other content)."""

    kind: ErrorKind
    message: str
    field: str | None
    revision: str | None
    """The revision whose content failed (null when the source could not be read)."""
    at: datetime


class MatrixSourceView(msgspec.Struct, frozen=True, kw_only=True):
    """GET /v1/matrix/source: where the matrix is followed from, and what the syncs found.
    `source` is null (and the rest empty) when SUPPORTGATE_MATRIX_SOURCE is not set."""

    source: str | None
    kind: SourceKind | None
    poll_seconds: float
    last_sync_at: datetime | None
    """When a sync last ended, whatever its outcome."""
    last_success_at: datetime | None
    revision: str | None
    """The revision last read: a commit, or an ETag."""
    version: str | None
    """The `version` of the matrix at that revision (null when it did not decode)."""
    last_published_version: str | None
    last_published_at: datetime | None
    last_error: SyncError | None
    """Set while the syncs fail; null once one succeeds."""
    consecutive_failures: int
    failures_total: int
