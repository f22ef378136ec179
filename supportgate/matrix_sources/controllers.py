"""HTTP: the matrix source. GET /v1/matrix/source (what the syncs found), POST
/v1/matrix/sync (a sync now, after the 202 answer). One service call each."""

from __future__ import annotations

from litestar import Controller, Response, Router, get, post
from litestar.background_tasks import BackgroundTask

from supportgate.dependencies import Part, served
from supportgate.openapi import error

from .services import MatrixSourceService
from .views import MatrixSourceView


class MatrixSourceController(Controller):
    path = "/v1/matrix"
    tags = ["matrix"]  # noqa: RUF012 - Litestar reads class attributes

    @get(
        "/source",
        opt={"role": "procurement"},
        summary="Where the matrix is followed from: last sync, revision, last error",
    )
    async def source(self, matrix_source: Part[MatrixSourceService]) -> MatrixSourceView:
        return await matrix_source.view_in_thread()

    @post(
        "/sync",
        opt={"role": "admin"},
        status_code=202,
        summary="Read the matrix source now (after the answer); its outcome is in /source",
        responses={409: error(409)},
    )
    async def sync(self, matrix_source: Part[MatrixSourceService]) -> Response[MatrixSourceView]:
        view = await matrix_source.requested_view()
        sync = BackgroundTask(matrix_source.poll_in_thread, requested=True)
        return Response(view, status_code=202, background=sync)


def routes(matrix_source: MatrixSourceService) -> Router:
    return served(MatrixSourceController, matrix_source=matrix_source)
