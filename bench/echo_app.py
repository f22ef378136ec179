"""The service as it runs in production, plus a trivial JSON echo endpoint as the baseline.

`uvicorn bench.echo_app:app` — the echo route is registered here, for benchmarks only; the
production app has no such route.
"""

from __future__ import annotations

from typing import Any

from litestar import post

from service.app import create_app
from service.config import Settings


@post("/bench/echo", opt={"public": True}, status_code=200)
async def echo(data: dict[str, Any]) -> dict[str, Any]:
    return data


app = create_app(Settings.from_env())
app.register(echo)
