"""create_app(settings) -> Litestar: routes, guard, error mapping, lifespan. No logic here."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from litestar import Litestar, Response, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.openapi.config import OpenAPIConfig

from service import __version__
from service.auth.guard import require_key
from service.config import Settings
from service.dependencies import RuntimeDep
from service.evaluations.controllers import EvaluationController, ManifestController
from service.http_errors import EXCEPTION_HANDLERS
from service.observability.health import live, ready
from service.observability.metrics import CONTENT_TYPE
from service.observability.requests import RequestObserver
from service.runtime import Runtime

MAX_BODY_BYTES = 1024 * 1024


@get("/metrics", opt={"public": True}, tags=["health"], summary="Prometheus metrics")
async def metrics(runtime: RuntimeDep) -> Response[bytes]:
    body = await anyio.to_thread.run_sync(runtime.metrics.exposition)
    return Response(body, media_type=CONTENT_TYPE)


def create_app(
    settings: Settings | None = None, *, runtime: Runtime | None = None, upgrade_schema: bool = True
) -> Litestar:
    """The API. `upgrade_schema=False` refuses to start on an out-of-date schema instead."""
    built = runtime or Runtime.build(settings or Settings.from_env())

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(lambda: built.start(upgrade_schema=upgrade_schema))
        app.state.runtime = built
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(built.stop)

    def provide_runtime() -> Runtime:
        return built

    return Litestar(
        route_handlers=[EvaluationController, ManifestController, live, ready, metrics],
        dependencies={"runtime": Provide(provide_runtime, sync_to_thread=False)},
        guards=[require_key],
        exception_handlers=EXCEPTION_HANDLERS,
        middleware=[RequestObserver()],
        lifespan=[lifespan],
        request_max_body_size=MAX_BODY_BYTES,
        openapi_config=OpenAPIConfig(title="supportgate", version=__version__, path="/schema"),
        state=State({"runtime": built}),
    )
