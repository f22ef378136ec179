"""GET /v1/matrix/source's answer; docs/matrix-sources.md explains each field."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

ErrorKind = Literal["unreachable", "invalid", "conflict"]
SourceKind = Literal["git", "https"]


class SyncError(msgspec.Struct, frozen=True, kw_only=True):
    kind: ErrorKind
    message: str
    field: str | None
    revision: str | None
    at: datetime


class MatrixSourceView(msgspec.Struct, frozen=True, kw_only=True):
    """`source` is null (and the rest empty) when SUPPORTGATE_MATRIX_SOURCE is not set."""

    source: str | None
    kind: SourceKind | None
    poll_seconds: float
    last_sync_at: datetime | None
    last_success_at: datetime | None
    revision: str | None
    version: str | None
    last_published_version: str | None
    last_published_at: datetime | None
    last_error: SyncError | None
    consecutive_failures: int
    failures_total: int
