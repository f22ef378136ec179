"""The rate limits' cost and their worth, on PostgreSQL (docs/rate-limits.md).

Run: python -m bench.bench_edge [--seconds 10] [--connections 64] [--rounds 2]
Needs wrk, vegeta and PostgreSQL, as bench.bench_api does.

1. Cost: POST /v1/evaluations (1,000 distinct HardwareManifests in turn, one admin key, wrk
   with 64 connections) on a server with the rate limits on (the defaults) against the same
   server with SUPPORTGATE_RATE_LIMITS=off, both on their own scratch databases and running
   side by side, each first given every manifest once (so that decisions come from the memo,
   as in bench_api), then measured in turn, on-off in even rounds and off-on in odd ones (the
   machine's drift falls on both); the median of the rounds. Target: on at least 95% of off.
2. Worth: a legitimate client (vegeta, --rate POSTs a second, constant) alone, then while wrk
   floods the same server with 64 connections of random unknown keys, all from 127.0.0.1 as
   the client is: its p50 latency with the flood against without, on the server with the
   limits on, and on the one with them off (every unknown key a database read: issue 12's
   finding), and on one with the limits on but their 429s sent at once
   (SUPPORTGATE_RATE_AUTH_REFUSAL_DELAY=0). Target: at most 2x with the limits on.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from bench.bench_api import WARMUP_SECONDS, _bodies, _find, _first_round, _lua, _vegeta, _wrk
from bench.common import measure
from bench.server import Server, running_server
from supportgate.auth.keys import generate_key
from supportgate.auth.limits import RequestLimits
from supportgate.clock import SYSTEM_CLOCK
from supportgate.config import RateLimits
from tests.services import postgres_admin_url, temporary_database

FLOOD_LUA = """\
wrk.method = "GET"
local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
request = function()
  local key = {}
  for i = 1, 43 do
    local at = math.random(1, #alphabet)
    key[i] = string.sub(alphabet, at, at)
  end
  return wrk.format(nil, nil, {["Authorization"] = "Bearer sg_" .. table.concat(key)}, nil)
end
"""
LIMITER_OPS = 10_000
LEGIT_RATE = 50  # --rate's default: a busy CI fleet's posts a second


def _limiter_seconds() -> float:
    """The limiter's own work for one admitted request (before_lookup, then admitted), in
    process: the part of the cost case's difference that is not noise."""
    limits = RequestLimits(RateLimits(key_per_second=1e9, key_burst=10**9), clock=SYSTEM_CLOCK)
    secret = generate_key()

    def admit() -> None:
        for _ in range(LIMITER_OPS):
            limits.before_lookup("127.0.0.1", secret)
            limits.admitted("bench", secret)

    return measure("limiter", admit, ops=LIMITER_OPS).seconds_per_op


def _throughput(server: Server, script: Path, args: argparse.Namespace) -> dict[str, float]:
    return _wrk(f"{server.url}/v1/evaluations", script, args.seconds, args.connections, args.warmup)


def _legit_p50(
    server: Server, body: bytes, args: argparse.Namespace, *, flood: Path | None
) -> dict[str, float]:
    """vegeta's numbers for the legitimate client, alone or under wrk's flood of `flood`."""
    if flood is None:
        return _vegeta(
            f"{server.url}/v1/evaluations", server.admin_key, body, args.rate, args.seconds
        )
    flooding = subprocess.Popen(
        [
            "wrk",
            "-t2",
            f"-c{args.connections}",
            f"-d{args.seconds + 4}s",
            "-s",
            str(flood),
            f"{server.url}/v1/manifests",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(2)  # the flood at full strength (and the address's budget spent) first
        measured = _vegeta(
            f"{server.url}/v1/evaluations", server.admin_key, body, args.rate, args.seconds
        )
    finally:
        out, _ = flooding.communicate(timeout=args.seconds + 30)
    return {**measured, "flood_rps": float(_find(r"Requests/sec:\s+([\d.]+)", out))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2, help="on/off pairs of the cost case")
    parser.add_argument("--rate", type=int, default=LEGIT_RATE, help="the legitimate client's")
    parser.add_argument(
        "--warmup", type=int, default=WARMUP_SECONDS, help="unmeasured seconds before each case"
    )
    args = parser.parse_args()
    bodies = _bodies()
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        admin_url = postgres_admin_url()
        limited = stack.enter_context(
            running_server(stack.enter_context(temporary_database(admin_url)))
        )
        unlimited = stack.enter_context(
            running_server(
                stack.enter_context(temporary_database(admin_url)),
                env={"SUPPORTGATE_RATE_LIMITS": "off"},
            )
        )
        undelayed = stack.enter_context(
            running_server(
                stack.enter_context(temporary_database(admin_url)),
                env={"SUPPORTGATE_RATE_AUTH_REFUSAL_DELAY": "0"},
            )
        )
        flood = tmp / "flood.lua"
        flood.write_text(FLOOD_LUA)
        for server in (limited, unlimited):  # decisions from the memo, as in bench_api
            _first_round(f"{server.url}/v1/evaluations", server.admin_key, bodies)
        on: list[dict[str, float]] = []
        off: list[dict[str, float]] = []
        for round_ in range(args.rounds):
            # on, off, then off, on: a drift of the machine (or of the growing databases)
            # over the rounds falls on both sides alike.
            order = [(limited, on), (unlimited, off)]
            for server, results in order if round_ % 2 == 0 else reversed(order):
                script = _lua(tmp / "cost.lua", server.admin_key, bodies)
                results.append(_throughput(server, script, args))
        alone = _legit_p50(limited, bodies[0], args, flood=None)
        flooded = _legit_p50(limited, bodies[0], args, flood=flood)
        undelayed_alone = _legit_p50(undelayed, bodies[0], args, flood=None)
        undelayed_flooded = _legit_p50(undelayed, bodies[0], args, flood=flood)
        unlimited_alone = _legit_p50(unlimited, bodies[0], args, flood=None)
        unlimited_flooded = _legit_p50(unlimited, bodies[0], args, flood=flood)
    limiter = _limiter_seconds()
    on_rps = statistics.median(row["rps"] for row in on)
    off_rps = statistics.median(row["rps"] for row in off)
    print(
        f"### Rate limits on PostgreSQL, one uvicorn worker, {args.connections} connections "
        f"({args.seconds} s each after {args.warmup} s unmeasured, median of {args.rounds})\n"
    )
    print("| case | req/s | non-2xx | ratio to off |")
    print("|---|---:|---:|---:|")
    print(
        f"| POST /v1/evaluations, rate limits off (baseline) | {off_rps:,.0f} "
        f"| {sum(row['errors'] for row in off):.0f} | 100% |"
    )
    print(
        f"| POST /v1/evaluations, rate limits on | {on_rps:,.0f} "
        f"| {sum(row['errors'] for row in on):.0f} | **{on_rps / off_rps:.1%}** |"
    )
    rounds_on = ", ".join(f"{row['rps']:,.0f}" for row in on)
    rounds_off = ", ".join(f"{row['rps']:,.0f}" for row in off)
    # Each round's two measurements are minutes apart at most: their ratio is the least
    # exposed to the machine's drift.
    paired = statistics.median(a["rps"] / b["rps"] for a, b in zip(on, off, strict=True))
    print(
        f"\n(rounds: {rounds_on} on; {rounds_off} off; "
        f"median of the rounds' on/off: {paired:.1%})\n"
    )
    print(
        f"The limiter's own work per admitted request, in process: {limiter * 1e6:.1f} µs, "
        f"{limiter * on_rps:.2%} of one core at the rate above.\n"
    )
    print(
        f"| legitimate client, {args.rate} POST/s | p50 | p99 | success | flood req/s | p50 ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, row, base in [
        ("limits on, alone (baseline)", alone, alone),
        (
            f"limits on, during a {args.connections}-connection flood of unknown keys",
            flooded,
            alone,
        ),
        ("limits on, refusals not delayed, alone", undelayed_alone, undelayed_alone),
        ("limits on, refusals not delayed, during the flood", undelayed_flooded, undelayed_alone),
        ("limits off, alone", unlimited_alone, unlimited_alone),
        ("limits off, during the flood", unlimited_flooded, unlimited_alone),
    ]:
        print(
            f"| {name} | {row['p50_ms']:.1f} ms | {row['p99_ms']:.1f} ms "
            f"| {row['success']:.1%} | {row.get('flood_rps', 0):,.0f} "
            f"| {row['p50_ms'] / base['p50_ms']:.2f}x |"
        )


if __name__ == "__main__":
    main()
