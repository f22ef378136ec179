"""The rate limits' cost and their worth, on PostgreSQL (docs/rate-limits.md).

Run: python -m bench.bench_edge [--seconds 10] [--connections 64] [--rounds 6]
         [--cases processes,switched,worth]
Needs wrk, vegeta and PostgreSQL, as bench.bench_api does.

1. Cost: POST /v1/evaluations (1,000 distinct HardwareManifests in turn, one admin key, wrk
   with 64 connections), each server first given every manifest once (as in
   bench_api). Three slots a round: the limits on (the defaults), off
   (SUPPORTGATE_RATE_LIMITS=off), and off again: the A/A control, measured exactly as the
   others, whose ratio to off is the noise floor to read the on/off ratio against. The slots'
   order changes from round to round (ORDERS: six rounds balance it). Two ways, one table row
   each:
   - `processes`: three server processes, each on its own scratch database and port, side by
     side. They differ in more than the setting: the database each writes (created, and
     given its manifests, one after the other), the port, the memory layout and hash seed,
     and where the scheduler puts each process and its ledger writer. The A/A row shows
     what that costs.
   - `switched`: one process (bench.switched_app, the production app on a Runtime the bench
     builds) whose limits are switched on and off by signal between measurements, so the
     database, port, caches and warm-up are the same; only drift over time is left, and the
     A/A row (off and off again in the same process) measures it.
   The table gives the medians' ratio, and the paired ratio (the median of each round's
   on/off, or off again/off: one round's slots are seconds apart). Target: on at least 95%
   of off, read with the A/A beside it; a gap within the A/A's distance from 100% is noise.
   Also the limiter's own in-process work per admitted request (before_lookup, admitted).
2. Worth (`worth`): a legitimate client (vegeta, --rate POSTs a second, constant) alone, then
   while wrk floods the same server with 64 connections of random unknown keys, all from
   127.0.0.1 as the client is: its p50 latency with the flood against without, on a server
   with the limits on, one with them off (every unknown key a lookup: issue 12's finding),
   and one with the limits on but their 429s sent at once
   (SUPPORTGATE_RATE_AUTH_REFUSAL_DELAY=0). Target: at most 2x with the limits on.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from bench.bench_api import WARMUP_SECONDS, _bodies, _find, _first_round, _lua, _vegeta, _wrk
from bench.common import measure
from bench.server import Server, running_server
from supportgate.auth.keys import generate_key
from supportgate.auth.limits import RequestLimits
from supportgate.auth.services import KeyService
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
OFF = {"SUPPORTGATE_RATE_LIMITS": "off"}
SLOTS = ("on", "off", "off again")
"""The cost case's measurements in a round: "off again" is the A/A control, measured as the
others are, so its ratio to "off" is the noise floor the on/off ratio is read against."""
ORDERS = [(0, 1, 2), (2, 1, 0), (1, 2, 0), (0, 2, 1), (2, 0, 1), (1, 0, 2)]
"""Each round's order of SLOTS: over six rounds each slot is measured first, second and last
twice, and right after each other slot twice (drift over a run falls on all alike)."""
METHODS = {
    "processes": "three processes (on; off; off again), a database each",
    "switched": "one process, limits switched between measurements",
}
CASES = (*METHODS, "worth")
SWITCH_TIMEOUT_S = 10.0
LIMITER_OPS = 10_000
LEGIT_RATE = 50  # --rate's default: a busy CI fleet's posts a second


def _limiter_seconds() -> float:
    """The limiter's own work for one admitted request (before_lookup, then admitted), in
    process: the part of the cost case's difference that is not noise."""
    limits = RequestLimits(RateLimits(key_per_second=1e9, key_burst=10**9), clock=SYSTEM_CLOCK)
    keys = KeyService(sessionmaker(class_=Session))  # never asked: the address has its tokens
    secret = generate_key()

    def admit() -> None:
        for _ in range(LIMITER_OPS):
            limits.before_lookup("127.0.0.1", secret, keys)
            limits.admitted("bench")

    return measure("limiter", admit, ops=LIMITER_OPS).seconds_per_op


def _throughput(server: Server, script: Path, args: argparse.Namespace) -> dict[str, float]:
    return _wrk(f"{server.url}/v1/evaluations", script, args.seconds, args.connections, args.warmup)


def _cost(
    measure_slot: Callable[[str], dict[str, float]], rounds: int
) -> dict[str, list[dict[str, float]]]:
    """Each slot measured once a round, in ORDERS' order of that round."""
    results: dict[str, list[dict[str, float]]] = {slot: [] for slot in SLOTS}
    for round_ in range(rounds):
        for index in ORDERS[round_ % len(ORDERS)]:
            results[SLOTS[index]].append(measure_slot(SLOTS[index]))
    return results


def _switch(server: Server, ack: Path, slot: str) -> None:
    """Switch bench.switched_app's limits to the slot's setting, and wait until they are."""
    state = "on" if slot == "on" else "off"
    os.kill(server.pid, signal.SIGUSR1 if state == "on" else signal.SIGUSR2)
    deadline = time.monotonic() + SWITCH_TIMEOUT_S
    while not (ack.exists() and ack.read_text() == state):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not switch its limits {state}")
        time.sleep(0.05)


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
    parser.add_argument("--rounds", type=int, default=len(ORDERS), help="rounds of the cost case")
    parser.add_argument("--rate", type=int, default=LEGIT_RATE, help="the legitimate client's")
    parser.add_argument(
        "--warmup", type=int, default=WARMUP_SECONDS, help="unmeasured seconds before each case"
    )
    parser.add_argument(
        "--cases",
        default=",".join(CASES),
        help=f"comma-separated, of {', '.join(CASES)} (default: all)",
    )
    args = parser.parse_args()
    cases = set(args.cases.split(","))
    if not cases <= set(CASES):
        parser.error(f"--cases: unknown {', '.join(sorted(cases - set(CASES)))}")
    bodies = _bodies()
    costs: dict[str, dict[str, list[dict[str, float]]]] = {}
    worth: list[tuple[str, dict[str, float], dict[str, float]]] = []
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        admin_url = postgres_admin_url()

        def server(env: dict[str, str] | None = None, app: str = "bench.echo_app:app") -> Server:
            database = stack.enter_context(temporary_database(admin_url))
            return stack.enter_context(running_server(database, app=app, env=env))

        def posted(server: Server) -> Server:  # as in bench_api
            _first_round(f"{server.url}/v1/evaluations", server.admin_key, bodies)
            return server

        def throughput(server: Server) -> dict[str, float]:
            return _throughput(server, _lua(tmp / "cost.lua", server.admin_key, bodies), args)

        if "processes" in cases:
            by_slot = {
                "on": posted(server()),
                "off": posted(server(OFF)),
                "off again": posted(server(OFF)),
            }
            costs["processes"] = _cost(lambda slot: throughput(by_slot[slot]), args.rounds)
        if "switched" in cases:
            ack = tmp / "switched"
            switched = posted(server({"BENCH_SWITCH_ACK": str(ack)}, app="bench.switched_app:app"))

            def measure_switched(slot: str) -> dict[str, float]:
                _switch(switched, ack, slot)
                return throughput(switched)

            costs["switched"] = _cost(measure_switched, args.rounds)
        if "worth" in cases:
            flood = tmp / "flood.lua"
            flood.write_text(FLOOD_LUA)
            for name, env in [
                ("limits on", None),
                ("limits on, refusals not delayed", {"SUPPORTGATE_RATE_AUTH_REFUSAL_DELAY": "0"}),
                ("limits off", OFF),
            ]:
                target = server(env)
                alone = _legit_p50(target, bodies[0], args, flood=None)
                worth.append((f"{name}, alone", alone, alone))
                flooded = _legit_p50(target, bodies[0], args, flood=flood)
                worth.append((f"{name}, during the flood", flooded, alone))
    if costs:
        _print_costs(costs, args)
    if worth:
        _print_worth(worth, args)


def _print_costs(
    costs: dict[str, dict[str, list[dict[str, float]]]], args: argparse.Namespace
) -> None:
    print(
        f"### Rate limits' cost: POST /v1/evaluations on PostgreSQL, one uvicorn worker, "
        f"{args.connections} connections ({args.seconds} s each after {args.warmup} s "
        f"unmeasured; medians of {args.rounds} rounds)\n"
    )
    print(
        "| servers | on req/s | off req/s | off again req/s | **on/off** | A/A (off again/off) "
        "| paired on/off | paired A/A | non-2xx |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for method, results in costs.items():
        rps = {slot: [row["rps"] for row in rows] for slot, rows in results.items()}
        median = {slot: statistics.median(values) for slot, values in rps.items()}
        paired_on = statistics.median(a / b for a, b in zip(rps["on"], rps["off"], strict=True))
        paired_aa = statistics.median(
            a / b for a, b in zip(rps["off again"], rps["off"], strict=True)
        )
        errors = sum(row["errors"] for rows in results.values() for row in rows)
        print(
            f"| {METHODS[method]} | {median['on']:,.0f} | {median['off']:,.0f} "
            f"| {median['off again']:,.0f} | **{median['on'] / median['off']:.1%}** "
            f"| {median['off again'] / median['off']:.1%} | {paired_on:.1%} | {paired_aa:.1%} "
            f"| {errors:.0f} |"
        )
    print()
    for method, results in costs.items():
        rounds = "; ".join(
            f"{slot} " + ", ".join(f"{row['rps']:,.0f}" for row in rows)
            for slot, rows in results.items()
        )
        print(f"- {method}, each round's req/s: {rounds}")
    limiter = _limiter_seconds()
    on_rps = max(statistics.median(row["rps"] for row in rows["on"]) for rows in costs.values())
    print(
        f"\nThe limiter's own work per admitted request, in process: {limiter * 1e6:.1f} µs, "
        f"{limiter * on_rps:.2%} of one core at {on_rps:,.0f} req/s.\n"
    )


def _print_worth(
    worth: list[tuple[str, dict[str, float], dict[str, float]]], args: argparse.Namespace
) -> None:
    print(
        f"| legitimate client, {args.rate} POST/s | p50 | p99 | success | flood req/s | p50 ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, row, base in worth:
        print(
            f"| {name} | {row['p50_ms']:.1f} ms | {row['p99_ms']:.1f} ms "
            f"| {row['success']:.1%} | {row.get('flood_rps', 0):,.0f} "
            f"| {row['p50_ms'] / base['p50_ms']:.2f}x |"
        )


if __name__ == "__main__":
    main()
