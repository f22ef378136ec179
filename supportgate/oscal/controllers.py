"""HTTP: GET /v1/reports/oscal, the fleet at a time as an OSCAL Assessment Results document."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Response, Router, get
from litestar.params import QueryParameter

from supportgate.dependencies import Part, served
from supportgate.openapi import body

from .services import OscalReports

MEDIA_TYPE = "application/json"
AsOf = Annotated[
    str | None,
    QueryParameter(
        format="date-time",
        description="the time the report speaks of (RFC 3339 with a time zone), not after "
        "now; absent: now",
    ),
]


class OscalController(Controller):
    path = "/v1/reports/oscal"
    tags = ["reports"]  # noqa: RUF012 - Litestar reads class attributes

    @get(
        "/",
        opt={"role": "procurement"},
        summary="The fleet at a time as an OSCAL Assessment Results document (OSCAL 1.2 JSON)",
        responses={
            200: body(
                dict[str, Any],
                '`{"assessment-results": ...}`: one observation per tracked manifest, one '
                "finding per rule its decision violates (docs/reports.md#oscal)",
            )
        },
    )
    async def oscal(self, oscal: Part[OscalReports], as_of: AsOf = None) -> Response[bytes]:
        at = oscal.as_of(as_of, field="as_of")
        document = await oscal.document_in_thread(at)
        return Response(document, media_type=MEDIA_TYPE)


def routes(oscal: OscalReports) -> Router:
    return served(OscalController, oscal=oscal)
