"""A real supportgate server process for benchmarks: uvicorn on a loopback port, keys made."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import httpx

from tests.services import free_port
from tests.signing import key_env

START_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class Server:
    url: str
    admin_key: str
    pid: int


def create_key(database_url: str, role: str, name: str) -> str:
    finished = subprocess.run(
        [sys.executable, "-m", "supportgate.cli", "keys", "create", "--role", role, "--name", name],
        env={**os.environ, "SUPPORTGATE_DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        check=True,
    )
    return finished.stdout.strip().splitlines()[-1]


@contextmanager
def running_server(
    database_url: str,
    *,
    app: str = "bench.echo_app:app",
    workers: int = 1,
    env: Mapping[str, str] | None = None,
) -> Iterator[Server]:
    """uvicorn serving `app` on `database_url` (one worker: `supportgate serve`'s default),
    with `env` over the caller's environment (settings such as SUPPORTGATE_RATE_LIMITS)."""
    admin_key = create_key(database_url, "admin", f"bench-{os.getpid()}-{time.monotonic_ns()}")
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            app,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-access-log",
            "--log-level",
            "warning",
            "--workers",
            str(workers),
        ],
        # PostgreSQL needs a signing key file: the tests' one, unless the caller's env names one
        env={
            **key_env(database_url),
            **os.environ,
            **(env or {}),
            "SUPPORTGATE_DATABASE_URL": database_url,
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(process.stderr.read().decode() if process.stderr else "exited")
            try:
                if httpx.get(f"{url}/health/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not become ready")
            time.sleep(0.2)
        yield Server(url=url, admin_key=admin_key, pid=process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()
