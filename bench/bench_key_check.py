"""The API key checked in a before-request hook against a plain Litestar guard, same run.

Run: python -m bench.bench_key_check [--seconds 10] [--rounds 3]
One server (bench/key_check_app.py) switched between the two in turn, `--rounds` times:
POST /v1/evaluations of 1,000 HardwareManifests (decisions committed), then the JSON echo
endpoint, under wrk's 64 connections; each figure the median of the rounds. Needs wrk and
PostgreSQL, as bench_api does.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path

from bench.bench_api import (
    WARMUP_SECONDS,
    _bodies,
    _cpu_seconds,
    _first_round,
    _lua,
    _run_wrk,
    _wrk,
)
from bench.server import Server, running_server
from tests.services import postgres_admin_url, temporary_database

MODES = {"hook": signal.SIGUSR1, "guard": signal.SIGUSR2}


def _switch(server: Server, ack: Path, mode: str) -> None:
    os.kill(server.pid, MODES[mode])
    while not (ack.exists() and ack.read_text() == mode):
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args()
    bodies = _bodies()
    figures: dict[tuple[str, str], list[float]] = {}
    with (
        tempfile.TemporaryDirectory() as tmp,
        temporary_database(postgres_admin_url()) as database_url,
        running_server(
            database_url,
            app="bench.key_check_app:app",
            env={"BENCH_SWITCH_ACK": str(Path(tmp) / "switched")},
        ) as server,
    ):
        url = f"{server.url}/v1/evaluations"
        evaluations = _lua(Path(tmp) / "eval.lua", server.admin_key, bodies)
        echo = _lua(Path(tmp) / "echo.lua", None, bodies)
        _first_round(url, server.admin_key, bodies)
        _run_wrk(url, evaluations, WARMUP_SECONDS, args.connections)
        for _ in range(args.rounds):
            for mode in MODES:
                _switch(server, Path(tmp) / "switched", mode)
                for case, target, script in (
                    ("evaluations", url, evaluations),
                    ("echo", f"{server.url}/bench/echo", echo),
                ):
                    _run_wrk(target, script, 1, args.connections)
                    cpu = _cpu_seconds(server.pid)
                    result = _wrk(target, script, args.seconds, args.connections, 0)
                    cpu = _cpu_seconds(server.pid) - cpu
                    if result["errors"]:
                        raise RuntimeError(f"{mode} {case}: {result['errors']:.0f} non-2xx")
                    figures.setdefault((mode, case), []).append(result["rps"])
                    served = result["rps"] * args.seconds
                    figures.setdefault((mode, f"{case} cpu"), []).append(cpu / served * 1e6)
    print(f"### API key check, {args.rounds} rounds of {args.seconds} s (median req/s)\n")
    print(
        "| key checked in | POST /v1/evaluations | server CPU per POST | echo "
        "| server CPU per echo | share of echo |\n|---|---:|---:|---:|---:|---:|"
    )
    for mode in MODES:
        posts, echoes = (statistics.median(figures[mode, case]) for case in ("evaluations", "echo"))
        post_cpu, echo_cpu = (
            statistics.median(figures[mode, f"{case} cpu"]) for case in ("evaluations", "echo")
        )
        print(
            f"| {mode} | {posts:,.0f} | {post_cpu:,.0f} µs | {echoes:,.0f} | {echo_cpu:,.0f} µs "
            f"| {posts / echoes:.0%} |"
        )
    gain = statistics.median(figures["hook", "evaluations"]) / statistics.median(
        figures["guard", "evaluations"]
    )
    print(f"\nhook over guard, POST /v1/evaluations: {gain - 1:+.1%}")


if __name__ == "__main__":
    main()
