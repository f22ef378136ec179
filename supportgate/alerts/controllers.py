"""HTTP: GET /v1/alerts, verdict changes oldest first, in cursor pages."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Router, get
from litestar.params import FromQuery, QueryParameter

from supportgate.dependencies import Part, served
from supportgate.http_paging import Cursor, Limit
from supportgate.manifests.decision import Cause, ManifestKind
from supportgate.pagination import DEFAULT_LIMIT

from .services import AlertService
from .views import AlertPage

Since = Annotated[
    str | None,
    QueryParameter(
        format="date-time", description="raised at or after (RFC 3339 with a time zone)"
    ),
]


Owner = Annotated[
    str | None,
    QueryParameter(description="the manifest's current owner (metadata.owner), exactly"),
]
CauseQuery = Annotated[
    Cause | None, QueryParameter(description="what made the decision that changed the verdict")
]
MatrixVersion = Annotated[
    str | None, QueryParameter(description="the matrix version the new verdict was made under")
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
        kind: FromQuery[ManifestKind | None] = None,
        owner: Owner = None,
        cause: CauseQuery = None,
        matrix_version: MatrixVersion = None,
        cursor: Cursor = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> AlertPage:
        return await alerts.page_in_thread(
            since=since,
            kind=kind,
            owner=owner,
            cause=cause,
            matrix_version=matrix_version,
            cursor=cursor,
            limit=limit,
        )


def routes(alerts: AlertService) -> Router:
    return served(AlertController, alerts=alerts)
