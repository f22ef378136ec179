"""HTTP: POST /v1/matrix/impact (what a proposed matrix would change). One service call."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Router, post

from supportgate.dependencies import Part, served
from supportgate.manifests.decode import format_for_media_type
from supportgate.openapi import MatrixBody

from .services import ImpactAnalysis, ImpactReport


class ImpactController(Controller):
    path = "/v1/matrix"
    tags = ["matrix"]  # noqa: RUF012 - Litestar reads class attributes

    @post(
        "/impact",
        opt={"role": "procurement"},
        status_code=200,
        summary="Which tracked manifests a proposed matrix would change; records nothing",
        operation_class=MatrixBody,
    )
    async def impact(
        self, request: Request[Any, Any, Any], impact: Part[ImpactAnalysis]
    ) -> ImpactReport:
        fmt = format_for_media_type(request.headers.get("content-type"))
        body = await request.body()
        return await impact.analyse_document_in_thread(body, fmt=fmt)


def routes(impact: ImpactAnalysis) -> Router:
    return served(ImpactController, impact=impact)
