"""HTTP: POST /v1/matrix/impact (what a proposed matrix would change). One service call."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from litestar import Controller, Request, post

from supportgate.dependencies import Part
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
        return await anyio.to_thread.run_sync(lambda: impact.analyse_document(body, fmt=fmt))
