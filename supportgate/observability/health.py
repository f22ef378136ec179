"""/health/live, /health/ready and /metrics, open to everyone; what ready means, check by check
(the canary's result kept CANARY_SECONDS): docs/ledger.md, Readiness."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
from litestar import Response, Router, get
from litestar.openapi.datastructures import ResponseSpec
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

from supportgate.clock import Clock
from supportgate.db import ping
from supportgate.db.migrate import check_schema
from supportgate.dependencies import Part, served
from supportgate.errors import DatabaseError, PolicyEngineError, SupportgateError
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.ledger.writer import LedgerWriter
from supportgate.manifests import HardwareManifest
from supportgate.matrix.services import MatrixService
from supportgate.observability.metrics import MEDIA_TYPE, Metrics
from supportgate.policy import PolicyEngine
from supportgate.policy.engine import LoadedMatrix
from supportgate.threads import thread_twin

CANARY_SECONDS = 5.0
CANARY = msgspec.convert(
    {
        "apiVersion": "supportgate/v1",
        "kind": "HardwareManifest",
        "metadata": {"name": "readiness-canary"},
        "spec": {
            "accelerator": {"vendor": "nvidia", "model": "B200", "arch": "sm100", "per_node": 8},
            "nodes": 1,
            "toolkit": {"name": "cuda", "version": "13.0"},
            "os": {"name": "linux"},
            "compiler": {"name": "gcc", "version": "13.2.0"},
            "python": "3.12.3",
        },
    },
    HardwareManifest,
)


@dataclass(kw_only=True, eq=False)  # a service: equal only to itself
class Readiness:
    db: Engine
    engine: PolicyEngine
    ledger: LedgerWriter
    matrices: MatrixService
    clock: Clock
    _canary: tuple[float, str | None] | None = field(default=None, init=False)
    """When the canary last ran (monotonic) and why it failed (None: it passed)."""

    def checks(self) -> dict[str, str]:
        """Each check: "ok" or why not (blocking: run it off the event loop)."""
        checks: dict[str, str] = {}
        for name, check in (
            ("database", self._database),
            ("ledger", self.ledger.check_ready),
            ("policy_engine", self._policy_engine),
        ):
            try:
                check()
                checks[name] = "ok"
            except SupportgateError as exc:
                checks[name] = str(exc)
        return checks

    checks_in_thread = thread_twin(checks)

    def _database(self) -> None:
        ping(self.db)
        check_schema(self.db)

    def _policy_engine(self) -> None:
        self.engine.check_ready()
        now = self.clock.monotonic()
        if self._canary is None or now - self._canary[0] >= CANARY_SECONDS:
            try:
                matrix = self.matrices.current().loaded
            except (DBAPIError, DatabaseError):
                return  # the database check says so; the engine is not to blame
            self._canary = (now, self._run_canary(matrix))
        failure = self._canary[1]
        if failure is not None:
            raise PolicyEngineError(failure)

    def _run_canary(self, matrix: LoadedMatrix) -> str | None:
        try:
            Evaluator(self.engine, matrix).evaluate(Subject(CANARY), evaluated_at=self.clock.now())
        except SupportgateError as exc:
            return str(exc)
        except Exception as exc:  # whatever the policies did, they cannot serve
            return f"the policy engine failed a canary evaluation: {type(exc).__name__}: {exc}"
        return None


@get("/health/live", opt={"public": True}, tags=["health"], summary="The process is up")
async def live() -> dict[str, str]:
    return {"status": "ok"}


@get(
    "/health/ready",
    opt={"public": True},
    tags=["health"],
    summary="The database, the ledger's writer and the policy engine can serve",
    responses={
        503: ResponseSpec(
            data_container=dict[str, Any],
            description="The database, the ledger's writer or the policy engine cannot "
            "serve; `checks` says which, and why",
            generate_examples=False,
        )
    },
)
async def ready(readiness: Part[Readiness]) -> Response[dict[str, Any]]:
    checks = await readiness.checks_in_thread()
    healthy = all(value == "ok" for value in checks.values())
    return Response(
        {"status": "ok" if healthy else "unavailable", "checks": checks},
        status_code=200 if healthy else 503,
    )


@get(
    "/metrics",
    opt={"public": True},
    tags=["health"],
    summary="Prometheus metrics",
    media_type=MEDIA_TYPE,
)
async def exposition(metrics: Part[Metrics]) -> Response[bytes]:
    return Response(await metrics.exposition(), media_type=MEDIA_TYPE)


def routes(readiness: Readiness, metrics: Metrics) -> Router:
    return served(live, ready, exposition, readiness=readiness, metrics=metrics)
