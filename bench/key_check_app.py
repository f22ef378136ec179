"""The service twice over one Runtime, its API key checked in a hook or by a Litestar guard,
switched by signals, for bench_key_check only.

`uvicorn bench.key_check_app:app`: SIGUSR1 serves every request with the key checked in the
before-request hook (supportgate.app.api_key_hook), SIGUSR2 with the same KeyGuard as a
Litestar guard; one process, database, port and warm caches, so nothing differs but that.
Each switch is acknowledged by writing "hook" or "guard" to the file BENCH_SWITCH_ACK names.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from types import FrameType
from typing import Any

from litestar import post
from litestar.types import Receive, Scope, Send

from supportgate.app import create_app
from supportgate.config import Settings
from supportgate.logging import configure_logging
from supportgate.runtime import Runtime


@post("/bench/echo", opt={"public": True}, status_code=200)
async def echo(data: dict[str, Any]) -> dict[str, Any]:
    return data


configure_logging()
_runtime = Runtime.build(Settings.from_env())
_APPS = {
    signal.SIGUSR1: ("hook", create_app(runtime=_runtime, key_check_as_hook=True)),
    signal.SIGUSR2: ("guard", create_app(runtime=_runtime)),
}
for _name, _app in _APPS.values():
    _app.register(echo)
_ACK = Path(os.environ["BENCH_SWITCH_ACK"])
_serving = [_APPS[signal.SIGUSR1][1]]


def _switch(signum: int, _frame: FrameType | None) -> None:
    state, _serving[0] = _APPS[signal.Signals(signum)]
    _ACK.write_text(state)


for _signum in _APPS:
    signal.signal(_signum, _switch)


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    # the lifespan (the Runtime's start and stop) is the first app's, once
    target = _serving[0] if scope["type"] in ("http", "websocket") else _APPS[signal.SIGUSR1][1]
    await target(scope, receive, send)
