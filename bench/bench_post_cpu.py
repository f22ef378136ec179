"""CPU time per POST /v1/evaluations, the service in this process on PostgreSQL.

Run: python -m bench.bench_post_cpu [--manifests 300] [--rounds 6] [--concurrency 32]

Throughput on a machine shared with other test runs says more about the neighbours than about
the code; the CPU this process spends per request does not. The application (create_app, its
lifespan run, a scratch database made and dropped) is called as an ASGI app with
--concurrency requests in flight and no HTTP server, so the figures leave out the server's
parsing (about 0.2 ms a request under uvicorn) and the client's work. First the JSON echo
endpoint of bench/echo_app.py (the baseline of bench_api), then the --manifests
HardwareManifests posted once (each new: "every manifest new"), then posted again --rounds
times ("decision committed": a tracked manifest re-posted, as in bench_api), after one round of
other names unmeasured (the first requests fill caches). Per request: the process's CPU (every
thread: the loop, the evaluation hops, the ledger's writer), and the wall time the garbage
collector took.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from litestar import Litestar, post

from bench.bench_api import _bodies
from supportgate.app import create_app
from supportgate.config import Settings
from supportgate.logging import configure_logging
from supportgate.runtime import Runtime
from tests.asgi import post_scope
from tests.services import postgres_admin_url, temporary_database
from tests.signing import with_test_key


@post("/bench/echo", opt={"public": True}, status_code=200)
async def echo(data: dict[str, Any]) -> dict[str, Any]:  # as bench/echo_app.py's
    return data


@contextmanager
def _stdout_discarded() -> Iterator[None]:
    """The service's log lines (JSON on stdout, as `serve` writes them) go nowhere."""
    kept = os.dup(1)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 1)
    try:
        yield
    finally:
        os.dup2(kept, 1)
        os.close(kept)


class _Collector:
    """The garbage collector's wall time, from its callbacks."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started


async def _post(app: Litestar, path: str, body: bytes, headers: list[tuple[bytes, bytes]]) -> int:
    scope = post_scope(path, [*headers, (b"content-length", str(len(body)).encode())])
    sent = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:  # the request is whole: wait as a client that stays connected does
            await asyncio.Event().wait()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)  # type: ignore[arg-type]
    return status


async def _post_all(
    app: Litestar, path: str, bodies: list[bytes], key: str | None, concurrency: int
) -> None:
    headers = [(b"host", b"bench"), (b"content-type", b"application/json")]
    if key is not None:
        headers.append((b"authorization", f"Bearer {key}".encode()))
    slots = asyncio.Semaphore(concurrency)

    async def one(body: bytes) -> None:
        async with slots:
            status = await _post(app, path, body, headers)
        if status not in (200, 201):
            raise RuntimeError(f"POST {path} answered {status}")

    await asyncio.gather(*(one(body) for body in bodies))


async def _measure(
    app: Litestar, path: str, bodies: list[bytes], key: str | None, *, rounds: int, concurrency: int
) -> tuple[float, float]:
    """CPU and garbage-collector seconds per request, over `bodies` `rounds` times."""
    collector = _Collector()
    start = time.process_time()
    for _ in range(rounds):
        await _post_all(app, path, bodies, key, concurrency)
    requests = rounds * len(bodies)
    gc.callbacks.remove(collector._callback)
    return (time.process_time() - start) / requests, collector.seconds / requests


async def _run(args: argparse.Namespace) -> None:
    rounds, concurrency, bodies = args.rounds, args.concurrency, _bodies(args.manifests)
    configure_logging()
    with temporary_database(postgres_admin_url()) as url, _stdout_discarded():
        runtime = Runtime.build(with_test_key(replace(Settings.from_env({}), database_url=url)))
        app = create_app(runtime=runtime)
        app.register(echo)
        async with app.lifespan():
            key = runtime.keys.create(name="bench", role="admin").key
            await _post_all(app, "/bench/echo", bodies, None, concurrency)  # warm-up
            warm = [body.replace(b"bench-pool-", b"warm-up-pool-") for body in bodies]
            await _post_all(app, "/v1/evaluations", warm, key, concurrency)
            echo_cpu, echo_gc = await _measure(
                app, "/bench/echo", bodies, None, rounds=rounds, concurrency=concurrency
            )
            new_cpu, new_gc = await _measure(
                app, "/v1/evaluations", bodies, key, rounds=1, concurrency=concurrency
            )
            posted_cpu, posted_gc = await _measure(
                app, "/v1/evaluations", bodies, key, rounds=rounds, concurrency=concurrency
            )
        runtime.db.dispose()
    print(f"### CPU per request in-process on PostgreSQL ({args.concurrency} in flight)\n")
    print("| case | process CPU | share of echo by CPU | garbage collector (wall) |")
    print("|---|---:|---:|---:|")
    for name, cpu, collected in (
        ("JSON echo endpoint (baseline)", echo_cpu, echo_gc),
        (f"POST /v1/evaluations, every manifest new ({args.manifests})", new_cpu, new_gc),
        (f"POST /v1/evaluations, decision committed ({args.rounds} rounds)", posted_cpu, posted_gc),
    ):
        print(
            f"| {name} | {cpu * 1e6:,.0f} µs | {echo_cpu / cpu:.0%} | {collected * 1e6:,.0f} µs |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--concurrency", type=int, default=32)
    asyncio.run(_run(parser.parse_args()))


if __name__ == "__main__":
    main()
