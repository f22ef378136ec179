"""HTTP: GET /v1/reports/fleet, the fleet's counts at a date (JSON, or CSV with format=csv)."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, Router, get
from litestar.params import QueryParameter

from supportgate.dependencies import Part, served
from supportgate.http_download import attachment
from supportgate.http_paging import AsOf
from supportgate.openapi import body, csv_operation
from supportgate.pagination import check_choice

from .report import CSV_COLUMNS, FleetReport
from .services import FleetService

CSV_MEDIA_TYPE = "text/csv; charset=utf-8"
FORMATS = ("json", "csv")

Format = Annotated[
    str,
    QueryParameter(name="format", enum=list(FORMATS), description="`json` or `csv`"),
]


class FleetReportController(Controller):
    path = "/v1/reports/fleet"
    tags = ["reports"]  # noqa: RUF012 - Litestar reads class attributes

    @get(
        "/",
        opt={"role": "procurement"},
        summary="The fleet at a date: counts by verdict, rule and owner; CSV with format=csv",
        operation_class=csv_operation(CSV_COLUMNS),
        responses={200: body(FleetReport, "The fleet's counts at as_of (JSON), or CSV")},
    )
    async def fleet(
        self,
        fleet: Part[FleetService],
        *,
        as_of: AsOf = None,
        output: Format = "json",
    ) -> FleetReport | Response[bytes]:
        check_choice("format", output, FORMATS)
        if output == "json":
            return await fleet.report_in_thread(as_of)
        report, text = await fleet.report_csv(as_of)
        filename = f"supportgate-fleet-{report.as_of.strftime('%Y%m%dT%H%M%SZ')}.csv"
        return Response(
            text,
            media_type=CSV_MEDIA_TYPE,
            headers=attachment(filename),
        )


def routes(fleet: FleetService) -> Router:
    return served(FleetReportController, fleet=fleet)
