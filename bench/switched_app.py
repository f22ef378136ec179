"""The service with its rate limits switched by signals, for bench_edge's cost case only.

`uvicorn bench.switched_app:app`: the production app on a Runtime built here, with the limits
of the environment's settings (the defaults: on) and, after SIGUSR2, none at all (what
SUPPORTGATE_RATE_LIMITS=off builds); SIGUSR1 puts the limits back. So one server process, its
one database, port and warm caches, is measured with the limits on and off in turn: nothing
differs between the two but the setting. Each switch is acknowledged by writing "on" or "off"
to the file named by BENCH_SWITCH_ACK. Only the bench starts this module; the product has no
way to switch its limits while it runs.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from types import FrameType

from supportgate.app import create_app
from supportgate.auth.limits import RequestLimits
from supportgate.config import Settings
from supportgate.logging import configure_logging
from supportgate.runtime import Runtime

configure_logging()  # as `supportgate serve` does
_settings = Settings.from_env()
_runtime = Runtime.build(_settings)
_LIMITS = {  # what the Runtime's one RequestLimits holds, on and off
    signal.SIGUSR1: ("on", dict(vars(_runtime.limits))),
    signal.SIGUSR2: ("off", vars(RequestLimits(None, clock=_runtime.clock))),
}
_ACK = Path(os.environ["BENCH_SWITCH_ACK"])


def _switch(signum: int, _frame: FrameType | None) -> None:
    # the API's guard holds the Runtime's RequestLimits: the next request sees its new buckets
    state, limits = _LIMITS[signal.Signals(signum)]
    vars(_runtime.limits).update(limits)
    _ACK.write_text(state)


for _signum in _LIMITS:
    signal.signal(_signum, _switch)
app = create_app(runtime=_runtime)
