"""HTTP: GET /v1/alerts, verdict changes oldest first, in cursor pages."""

from __future__ import annotations

from typing import Annotated

import anyio.to_thread
from litestar import Controller, get
from litestar.params import QueryParameter

from supportgate.dependencies import Part
from supportgate.http_paging import Cursor, Limit
from supportgate.pagination import DEFAULT_LIMIT

from .services import AlertService
from .views import AlertPage

Since = Annotated[
    str | None,
    QueryParameter(
        format="date-time", description="raised at or after (RFC 3339 with a time zone)"
    ),
]


class AlertController(Controller):
    path = "/v1/alerts"
    tags = ["alerts"]  # noqa: RUF012 - Litestar reads class attributes

    @get(
        "/",
        opt={"role": "procurement"},
        summary="Verdict changes of tracked manifests, oldest first; cursor pages",
    )
    async def alerts(
        self,
        alerts: Part[AlertService],
        *,
        since: Since = None,
        cursor: Cursor = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> AlertPage:
        return await anyio.to_thread.run_sync(
            lambda: alerts.page(since=since, cursor=cursor, limit=limit)
        )
