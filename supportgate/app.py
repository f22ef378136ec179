"""create_app(settings) -> Litestar: routes, guard, error mapping, lifespan. No logic here."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar
from litestar.logging.config import LoggingConfig
from litestar.openapi.config import OpenAPIConfig

from supportgate import __version__
from supportgate.alerts.controllers import routes as alert_routes
from supportgate.audit.controllers import routes as audit_routes
from supportgate.auth.controllers import routes as key_routes
from supportgate.auth.guard import KeyGuard
from supportgate.auth.views import OWNER
from supportgate.config import Settings
from supportgate.console.app import console_mount, create_console
from supportgate.console.logins import ConsoleSessions
from supportgate.console.services import ConsoleService
from supportgate.evaluations.controllers import routes as evaluation_routes
from supportgate.fleet.controllers import routes as fleet_routes
from supportgate.http_allow import AllowEveryMethod
from supportgate.http_errors import EXCEPTION_HANDLERS, log_unexpected
from supportgate.http_input import check_parameters
from supportgate.impact.controllers import routes as impact_routes
from supportgate.matrix.controllers import routes as matrix_routes
from supportgate.matrix_sources.controllers import routes as matrix_source_routes
from supportgate.observability.health import routes as health_routes
from supportgate.observability.requests import RequestObserver
from supportgate.openapi import components, declare_request_rules, document
from supportgate.oscal.controllers import routes as oscal_routes
from supportgate.policy.controllers import routes as policy_routes
from supportgate.reevaluation.controllers import routes as reevaluation_routes
from supportgate.runtime import Runtime
from supportgate.waivers.controllers import routes as waiver_routes
from supportgate.webhooks.controllers import routes as webhook_routes
from supportgate.webhooks.views import URL_PATTERN

MAX_BODY_BYTES = 1024 * 1024


def console_app(runtime: Runtime, key_guard: KeyGuard) -> Litestar:
    return create_console(
        ConsoleService(
            policies=runtime.policies,
            tracking=runtime.tracking,
            audit_service=runtime.audit,
            matrices=runtime.matrices,
            impact_analysis=runtime.impact,
            alert_service=runtime.alerts,
            fleet_service=runtime.fleet,
            oscal=runtime.oscal,
            webhook_service=runtime.webhooks,
            waiver_service=runtime.waivers,
            clock=runtime.clock,
        ),
        ConsoleSessions(
            runtime.sessions,
            keys=runtime.keys,
            clock=runtime.clock,
            idle_timeout=runtime.settings.console_idle_timeout,
            session_timeout=runtime.settings.console_session_timeout,
        ),
        key_guard,
    )


def create_app(
    settings: Settings | None = None,
    *,
    runtime: Runtime | None = None,
    upgrade_schema: bool = True,
) -> Litestar:
    """The API. `upgrade_schema=False` refuses to start on an out-of-date schema instead.
    Here, and only here, each domain's routes get the services they serve (the Runtime's
    parts): no handler, guard or middleware sees the Runtime."""
    built = runtime or Runtime.build(settings or Settings.from_env())
    key_guard = KeyGuard(built.keys, built.limits)

    @asynccontextmanager
    async def lifespan(_app: Litestar) -> AsyncIterator[None]:
        await built.start_in_thread(upgrade_schema=upgrade_schema)
        # What start-up made lives as long as the service: kept out of the collector's full
        # passes, which walked its 190,000 objects for 250 ms every ~900 POSTs (a tenth of a
        # POST's CPU, and a pause; docs/performance.md, "Speed devices"). Thawed at the stop.
        gc.freeze()
        try:
            yield
        finally:
            gc.unfreeze()
            await built.stop_in_thread()

    evaluations = evaluation_routes(built.evaluations, built.dry_runs, built.tracking, built.fleet)
    app = Litestar(
        route_handlers=[
            evaluations,
            matrix_routes(built.matrices),
            matrix_source_routes(built.matrix_source),
            impact_routes(built.impact),
            audit_routes(built.audit, built.proofs),
            fleet_routes(built.fleet),
            webhook_routes(built.webhooks),
            reevaluation_routes(built.reevaluation),
            alert_routes(built.alerts),
            waiver_routes(built.waivers),
            policy_routes(built.bundles, built.policies),
            oscal_routes(built.oscal),
            key_routes(built.keys),
            health_routes(built.readiness, built.metrics),
            console_mount(console_app(built, key_guard)),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        after_exception=[log_unexpected],
        lifespan=[lifespan],
        # a plain guard: the key checked in a before_request hook instead bought nothing
        # (docs/performance.md, "Speed devices")
        guards=[key_guard],
        before_request=check_parameters,
        # Litestar's loggers go to the root logger (supportgate.logging), where its default
        # would replace the handler with text on stderr; its exception log would log every 4xx
        # with a traceback (`log_unexpected` logs the 500s).
        logging_config=LoggingConfig(
            configure_root_logger=False,
            loggers={"litestar": {"level": "INFO", "propagate": True}},
            log_exceptions="never",
        ),
        request_max_body_size=MAX_BODY_BYTES,
        openapi_config=OpenAPIConfig(
            title="supportgate", version=__version__, path="/schema", components=components()
        ),
    )
    document(app)
    declare_request_rules(
        app,
        waivable_rules=built.waivers.deny_rules,
        key_owner_pattern=OWNER,
        webhook_url=URL_PATTERN,
    )
    app.asgi_handler = AllowEveryMethod(app)(app.asgi_handler)
    # Outermost, as Litestar's own OpenTelemetry plugin wraps it: a route's middleware never
    # sees a request no route matches (404, 405), and every request gets its event.
    app.asgi_handler = RequestObserver(built.metrics.request_duration)(app.asgi_handler)
    return app
