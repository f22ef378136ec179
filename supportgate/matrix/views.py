"""Response bodies of the matrix endpoints. A version neither `current` nor `pending` has been
superseded, or never applied (its `effective_from` earlier than the current version's)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec


class MatrixProvenance(msgspec.Struct, frozen=True, kw_only=True):
    """Where a version read from a matrix source came from (docs/matrix-sources.md)."""

    source: str
    """SUPPORTGATE_MATRIX_SOURCE as configured, without credentials."""
    revision: str
    """The commit read, or the ETag (`sha256:<hex>` of the body when the server sent none)."""
    fetched_at: datetime


class MatrixVersionSummary(msgspec.Struct, frozen=True, kw_only=True):
    version: str
    effective_from: datetime | None
    published_at: datetime
    published_by: str | None
    provenance: MatrixProvenance | None
    """Set for a version read from a matrix source; null for one posted."""
    current: bool
    pending: bool


class MatrixVersionDetail(MatrixVersionSummary, frozen=True, kw_only=True):
    document: dict[str, Any]


class MatrixVersionList(msgspec.Struct, frozen=True, kw_only=True):
    """Every published version, newest effective first; one page (`next_cursor` is null)."""

    items: list[MatrixVersionSummary]
    next_cursor: str | None = None
