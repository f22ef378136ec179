"""/health/live and /health/ready (database and policy engine), open to everyone.

The database is ready when it answers and holds every table of the schema."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from litestar import Response, get
from litestar.openapi.datastructures import ResponseSpec
from sqlalchemy import Engine

from supportgate.db import ping
from supportgate.db.migrate import check_schema
from supportgate.dependencies import Part
from supportgate.errors import SupportgateError
from supportgate.policy import PolicyEngine


def _database_ready(db: Engine) -> None:
    ping(db)
    check_schema(db)


@get("/health/live", opt={"public": True}, tags=["health"], summary="The process is up")
async def live() -> dict[str, str]:
    return {"status": "ok"}


@get(
    "/health/ready",
    opt={"public": True},
    tags=["health"],
    summary="The database and the policy engine can serve",
    responses={
        503: ResponseSpec(
            data_container=dict[str, Any],
            description="The database or the policy engine cannot serve; `checks` says which",
            generate_examples=False,
        )
    },
)
async def ready(db: Part[Engine], engine: Part[PolicyEngine]) -> Response[dict[str, Any]]:
    checks: dict[str, str] = {}
    for name, check in (
        ("database", lambda: _database_ready(db)),
        ("policy_engine", engine.check_ready),
    ):
        try:
            await anyio.to_thread.run_sync(check)
            checks[name] = "ok"
        except SupportgateError as exc:
            checks[name] = str(exc)
    healthy = all(value == "ok" for value in checks.values())
    return Response(
        {"status": "ok" if healthy else "unavailable", "checks": checks},
        status_code=200 if healthy else 503,
    )
