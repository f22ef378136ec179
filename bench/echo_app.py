"""The service as it runs in production, plus a trivial JSON echo endpoint as the baseline.

`uvicorn bench.echo_app:app` — the echo route is registered here, for benchmarks only; the
production app has no such route.
"""

from __future__ import annotations

from typing import Any

from litestar import post

from supportgate.app import create_app
from supportgate.config import Settings
from supportgate.logging import configure_logging


@post("/bench/echo", opt={"public": True}, status_code=200)
async def echo(data: dict[str, Any]) -> dict[str, Any]:
    return data


configure_logging()  # as `supportgate serve` does: JSON lines, not the console renderer
app = create_app(Settings.from_env())
app.register(echo)
