"""HTTP: the support matrix (POST /v1/matrix/impact is supportgate.impact's)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Router, get, post
from litestar.params import FromPath

from supportgate.auth.guard import principal_of
from supportgate.dependencies import Part, served
from supportgate.errors import NotFound
from supportgate.manifests.decode import format_for_media_type
from supportgate.openapi import MatrixBody, error

from .services import MatrixService
from .views import MatrixVersionDetail, MatrixVersionList


class MatrixController(Controller):
    path = "/v1/matrix"
    tags = ["matrix"]  # noqa: RUF012 - Litestar reads class attributes

    @get("/", opt={"role": "procurement"}, summary="The support matrix applied now")
    async def current(self, matrices: Part[MatrixService]) -> MatrixVersionDetail:
        return await matrices.current_view_in_thread()

    @get(
        "/versions",
        opt={"role": "procurement"},
        summary="Every published version, newest effective first (pending ones included)",
    )
    async def versions(self, matrices: Part[MatrixService]) -> MatrixVersionList:
        return await matrices.version_list_in_thread()

    @get(
        "/versions/{version:str}",
        opt={"role": "procurement"},
        summary="One published version with its document",
    )
    async def version(
        self, matrices: Part[MatrixService], version: FromPath[str]
    ) -> MatrixVersionDetail:
        found = await matrices.version_view_in_thread(version)
        if found is None:
            raise NotFound(f"no matrix version {version!r} is published", field="version")
        return found

    @post(
        "/",
        opt={"role": "admin"},
        summary="Publish a new matrix version (JSON or YAML); a published version never changes",
        operation_class=MatrixBody,
        responses={409: error(409)},
    )
    async def publish(
        self, request: Request[Any, Any, Any], matrices: Part[MatrixService]
    ) -> MatrixVersionDetail:
        fmt = format_for_media_type(request.headers.get("content-type"))
        body = await request.body()
        publisher = principal_of(request).name
        published = await matrices.publish_document(body, fmt=fmt, published_by=publisher)
        request.state["log"] = {"matrix_version": published.version}
        return published


def routes(matrices: MatrixService) -> Router:
    return served(MatrixController, matrices=matrices)
