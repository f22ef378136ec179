"""HTTP: GET /v1/reports/oscal, the fleet at a time as an OSCAL Assessment Results document."""

from __future__ import annotations

from typing import Any

from litestar import Controller, MediaType, Response, Router, get

from supportgate.dependencies import Part, served
from supportgate.http_paging import AsOf
from supportgate.openapi import body

from .services import OscalReports


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
        return Response(document, media_type=MediaType.JSON)


def routes(oscal: OscalReports) -> Router:
    return served(OscalController, oscal=oscal)
