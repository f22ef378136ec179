"""The query parameters of every endpoint that answers in cursor pages, and the manifest filters
several listings share, declared once: their checks (Litestar refuses a limit out of range with
a 400 naming it) and their OpenAPI text."""

from __future__ import annotations

from typing import Annotated

from litestar.params import QueryParameter

from supportgate.manifests.decision import MANIFEST_KINDS
from supportgate.pagination import MAX_LIMIT

Cursor = Annotated[str | None, QueryParameter(description="`next_cursor` of the page before")]
Limit = Annotated[int, QueryParameter(ge=1, le=MAX_LIMIT, description="page size")]
Kind = Annotated[str | None, QueryParameter(enum=list(MANIFEST_KINDS), description="manifest kind")]
Name = Annotated[str | None, QueryParameter(description="manifest name (`metadata.name`)")]
AsOf = Annotated[
    str | None,
    QueryParameter(
        format="date-time",
        description="the fleet as it stood at this time: RFC 3339 with a time zone, not after "
        "now; the decisions recorded at or before it decide (docs/reports.md)",
    ),
]
