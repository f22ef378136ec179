"""create_app(settings) -> Litestar: routes, guard, error mapping, lifespan. No logic here."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from litestar import Litestar, Request, Response, get
from litestar.datastructures import State
from litestar.logging.config import LoggingConfig
from litestar.openapi.config import OpenAPIConfig

from supportgate import __version__
from supportgate.alerts.controllers import AlertController
from supportgate.audit.controllers import AuditController
from supportgate.auth.controllers import KeyController
from supportgate.auth.guard import require_key
from supportgate.auth.views import OWNER
from supportgate.config import Settings
from supportgate.console import console_mount
from supportgate.dependencies import Part, provide_parts
from supportgate.evaluations.controllers import (
    DryRunController,
    EvaluationController,
    ManifestController,
)
from supportgate.fleet.controllers import FleetReportController
from supportgate.http_allow import AllowEveryMethod
from supportgate.http_errors import EXCEPTION_HANDLERS, log_unexpected
from supportgate.http_input import check_parameters
from supportgate.impact.controllers import ImpactController
from supportgate.matrix.controllers import MatrixController
from supportgate.matrix_sources.controllers import MatrixSourceController
from supportgate.observability.health import live, ready
from supportgate.observability.metrics import MEDIA_TYPE, Metrics
from supportgate.observability.requests import RequestObserver
from supportgate.openapi import components, declare_request_rules, document
from supportgate.oscal.controllers import OscalController
from supportgate.policy.controllers import BundleController, PolicyController
from supportgate.reevaluation.controllers import ReevaluationController
from supportgate.runtime import Runtime
from supportgate.waivers.controllers import WaiverController
from supportgate.webhooks.controllers import WebhookController

MAX_BODY_BYTES = 1024 * 1024


def _logging_config() -> LoggingConfig:
    """Litestar's loggers go to the root logger, which supportgate.logging configures (JSON on
    stdout); Litestar's default would replace its handler with text on stderr. Its exception
    log is off: it would log every 4xx with a traceback; `log_unexpected` logs the 500s."""
    return LoggingConfig(
        configure_root_logger=False,
        loggers={"litestar": {"level": "INFO", "propagate": True}},
        log_exceptions="never",
    )


async def admit_and_check(request: Request[Any, Any, Any]) -> None:
    """Before every handler: the API key and the route's role (auth.guard.require_key), then
    the parameters (http_input.check_parameters).

    The key is checked in this hook rather than as a Litestar guard (`guards=[...]`): Litestar
    calls each guard with a fresh `copy.copy` of the route handler, about 90 µs a request on
    the development machine, more than the guard's own work (docs/speed-history.md). A hook
    is resolved once per handler; no handler here declares its own `before_request` (which
    would replace this one), and tests/auth/test_auth.py checks every route's 401 and
    403. ASGI mounts run no hook: the only one, the console, has its own guard and
    `require_key` would let it through anyway."""
    await require_key(request, request.route_handler)
    await check_parameters(request)


@get(
    "/metrics",
    opt={"public": True},
    tags=["health"],
    summary="Prometheus metrics",
    media_type=MEDIA_TYPE,
)
async def metrics(metrics: Part[Metrics]) -> Response[bytes]:
    body = await anyio.to_thread.run_sync(metrics.exposition)
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

    app = Litestar(
        route_handlers=[
            EvaluationController,
            DryRunController,
            ManifestController,
            MatrixController,
            MatrixSourceController,
            ImpactController,
            AuditController,
            FleetReportController,
            WebhookController,
            ReevaluationController,
            AlertController,
            WaiverController,
            BundleController,
            OscalController,
            PolicyController,
            KeyController,
            live,
            ready,
            metrics,
            console_mount(built),
        ],
        dependencies=provide_parts(built),
        exception_handlers=EXCEPTION_HANDLERS,
        after_exception=[log_unexpected],
        lifespan=[lifespan],
        before_request=admit_and_check,
        logging_config=_logging_config(),
        request_max_body_size=MAX_BODY_BYTES,
        openapi_config=OpenAPIConfig(
            title="supportgate", version=__version__, path="/schema", components=components()
        ),
        state=State({"runtime": built}),
    )
    document(app)
    declare_request_rules(app, waivable_rules=built.waivers.deny_rules, key_owner_pattern=OWNER)
    app.asgi_handler = AllowEveryMethod(app)(app.asgi_handler)
    # Outermost, as Litestar's own OpenTelemetry plugin wraps it: a route's middleware never
    # sees a request no route matches (404, 405), and every request gets its event.
    app.asgi_handler = RequestObserver()(app.asgi_handler)
    return app
