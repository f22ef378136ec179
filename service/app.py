"""create_app(settings) -> Litestar: routes, guard, error mapping, lifespan. No logic here."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from litestar import Litestar, Response, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.logging.config import LoggingConfig
from litestar.openapi.config import OpenAPIConfig

from service import __version__
from service.alerts.controllers import AlertController
from service.audit.controllers import AuditController
from service.auth.guard import require_key
from service.config import Settings
from service.console import console_mount
from service.dependencies import RuntimeDep
from service.evaluations.controllers import EvaluationController, ManifestController
from service.http_errors import EXCEPTION_HANDLERS, log_unexpected
from service.http_input import refuse_nul_characters
from service.matrix.controllers import MatrixController
from service.observability.health import live, ready
from service.observability.metrics import MEDIA_TYPE
from service.observability.requests import RequestObserver
from service.openapi import components, document
from service.reevaluation.controllers import ReevaluationController
from service.runtime import Runtime
from service.waivers.controllers import WaiverController
from service.webhooks.controllers import WebhookController

MAX_BODY_BYTES = 1024 * 1024


def _logging_config() -> LoggingConfig:
    """Litestar's loggers go to the root logger, which service.logging configures (JSON on
    stdout); Litestar's default would replace its handler with text on stderr. Its exception
    log is off: it would log every 4xx with a traceback; `log_unexpected` logs the 500s."""
    return LoggingConfig(
        configure_root_logger=False,
        loggers={"litestar": {"level": "INFO", "propagate": True}},
        log_exceptions="never",
    )


@get(
    "/metrics",
    opt={"public": True},
    tags=["health"],
    summary="Prometheus metrics",
    media_type=MEDIA_TYPE,
)
async def metrics(runtime: RuntimeDep) -> Response[bytes]:
    body = await anyio.to_thread.run_sync(runtime.metrics.exposition)
    return Response(body, media_type=MEDIA_TYPE)


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

    app = Litestar(
        route_handlers=[
            EvaluationController,
            ManifestController,
            MatrixController,
            AuditController,
            WebhookController,
            ReevaluationController,
            AlertController,
            WaiverController,
            live,
            ready,
            metrics,
            console_mount(built),
        ],
        dependencies={"runtime": Provide(provide_runtime, sync_to_thread=False)},
        guards=[require_key],
        exception_handlers=EXCEPTION_HANDLERS,
        after_exception=[log_unexpected],
        lifespan=[lifespan],
        before_request=refuse_nul_characters,
        logging_config=_logging_config(),
        request_max_body_size=MAX_BODY_BYTES,
        openapi_config=OpenAPIConfig(
            title="supportgate", version=__version__, path="/schema", components=components()
        ),
        state=State({"runtime": built}),
    )
    document(app)
    # Outermost, as Litestar's own OpenTelemetry plugin wraps it: a route's middleware never
    # sees a request no route matches (404, 405), and every request gets its event.
    app.asgi_handler = RequestObserver()(app.asgi_handler)
    return app
