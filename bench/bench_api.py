"""Sustained POST /v1/evaluations on PostgreSQL against the same server's JSON echo endpoint.

Run: python -m bench.bench_api [--seconds 10] [--connections 64]
Needs wrk (Debian package) and vegeta (go install github.com/tsenart/vegeta/v12@v12.12.0), and
PostgreSQL (started like the tests start it; a scratch database is made and dropped).

1. wrk, 64 connections: the echo endpoint (baseline), then evaluations of 1,000 distinct
   HardwareManifests in turn (each a decision committed to the verifiable log, its entry, tree
   nodes and row, and a tracked-manifest upsert; checkpoints signed every 5 s) —
   decisions/s as a share of echo req/s; then the same with a new name in every
   request, so that every request inserts a new tracked manifest. "Sustained"
   is the steady state: each case first runs --warmup seconds (3) unmeasured; before that, the
   evaluations' first round of the 1,000 manifests is posted once, each evaluated afresh and
   inserted as a new tracked manifest (on a loaded machine 3 s did not cover it, and the
   measured seconds then held part of that round; the third case measures that cost
   throughout).
2. vegeta at a constant 100 POST/s (the target: p99 at most 50 ms), then at half the measured
   evaluation peak: p50/p99 latency.
3. Where the CPU went in the measured seconds of "decision committed", per decision: the
   server process (the request loop and the ledger's writer thread) and the PostgreSQL
   backends of the scratch database (from /proc; less noisy than req/s on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import msgspec
import yaml

from bench.common import EXAMPLES, children, cpu_seconds
from bench.server import running_server
from tests.services import postgres_admin_url, temporary_database

MANIFESTS = 1000
TARGET_RATE = 100  # POST/s at which p99 must stay within 50 ms
FIRST_ROUND_CLIENTS = 16
WARMUP_SECONDS = 3  # --warmup's default


def _processes(server_pid: int, database: str) -> dict[str, list[str]]:
    """The server, its evaluation process (SUPPORTGATE_EVALUATION_PROCESS) and the database's
    PostgreSQL backends."""
    backends = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().decode(errors="replace")
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                continue
            if command.startswith("postgres:") and f" {database} " in command:
                backends.append(entry.name)
    return {
        "server process": [str(server_pid)],
        "evaluation process": children(server_pid),
        "PostgreSQL backends": backends,
    }


def _cpu_of(
    server_pid: int, database: str, run: Callable[[], dict[str, float]]
) -> tuple[dict[str, float], dict[str, float]]:
    """`run`'s numbers, and the CPU seconds each part spent meanwhile."""
    parts = _processes(server_pid, database)
    before = {name: sum(map(cpu_seconds, pids)) for name, pids in parts.items()}
    numbers = run()
    after = {name: sum(map(cpu_seconds, pids)) for name, pids in parts.items()}
    return numbers, {name: after[name] - before[name] for name in parts}


def _bodies(count: int = MANIFESTS) -> list[bytes]:
    template = yaml.safe_load((EXAMPLES / "hw-h100-pool-a.yaml").read_text())
    template["spec"]["toolkit"]["version"] = "12.8"  # YAML read it as a float
    bodies = []
    for index in range(count):
        template["metadata"]["name"] = f"bench-pool-{index:04d}"
        bodies.append(msgspec.json.encode(template))
    return bodies


def _first_round(url: str, key: str, bodies: list[bytes]) -> None:
    """Post every body once (each a new tracked manifest, evaluated afresh), all 201."""
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    with httpx.Client(headers=headers, timeout=60) as client:

        def post(body: bytes) -> None:
            client.post(url, content=body).raise_for_status()

        with ThreadPoolExecutor(FIRST_ROUND_CLIENTS) as pool:
            list(pool.map(post, bodies))


def _lua(path: Path, key: str | None, bodies: list[bytes], *, fresh: bool = False) -> Path:
    """A wrk script posting `bodies` in turn; `fresh`: each request renames its manifest to a
    name never posted before (a new tracked manifest each time)."""
    lines = ['wrk.method = "POST"', 'wrk.headers["Content-Type"] = "application/json"']
    if key:
        lines.append(f'wrk.headers["Authorization"] = "Bearer {key}"')
    lines.append("local bodies = {")
    lines.extend(f"  {json.dumps(body.decode())}," for body in bodies)
    lines += ["}", "local i = 0", "local n = 0", "local run = nil", "request = function()"]
    lines.append("  i = i % #bodies + 1")
    if fresh:
        lines += [
            # per wrk thread: the hex address of a table of its own Lua state
            '  if run == nil then run = string.gsub(tostring({}), "[^%x]", "") end',
            "  n = n + 1",
            '  local name = "fresh-" .. run .. "-" .. n',
            '  local body = string.gsub(bodies[i], "bench%-pool%-%d+", name)',
            "  return wrk.format(nil, nil, nil, body)",
        ]
    else:
        lines.append("  return wrk.format(nil, nil, nil, bodies[i])")
    lines.append("end")
    path.write_text("\n".join(lines) + "\n")
    return path


def _wrk(url: str, script: Path, seconds: int, connections: int, warmup: int) -> dict[str, float]:
    """wrk's numbers for `seconds` of load, after `warmup` seconds of the same load unmeasured."""
    if warmup > 0:
        _run_wrk(url, script, warmup, connections)
    out = _run_wrk(url, script, seconds, connections)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "rps": float(_find(r"Requests/sec:\s+([\d.]+)", out)),
        "errors": float(non2xx.group(1)) if non2xx else 0.0,
        "p99_ms": _wrk_ms(_find(r"99%\s+([\d.]+\w+)", out)),
    }


def _run_wrk(url: str, script: Path, seconds: int, connections: int) -> str:
    finished = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
    )
    return finished.stdout


def _find(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    if found is None:
        raise RuntimeError(f"no {pattern!r} in the output:\n{text}")
    return found.group(1)


def _wrk_ms(text: str) -> float:
    value, unit = _find(r"^([\d.]+\w+)$", text), re.sub(r"[\d.]", "", text)
    return float(value[: -len(unit)]) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def _vegeta(url: str, key: str, body: bytes, rate: int, seconds: int) -> dict[str, float]:
    vegeta = shutil.which("vegeta") or str(Path.home() / "go" / "bin" / "vegeta")
    with tempfile.NamedTemporaryFile(suffix=".json") as body_file:
        body_file.write(body)
        body_file.flush()
        attack = subprocess.run(
            [
                vegeta,
                "attack",
                f"-rate={rate}/s",
                f"-duration={seconds}s",
                f"-body={body_file.name}",
                "-header=Content-Type: application/json",
                f"-header=Authorization: Bearer {key}",
            ],
            input=f"POST {url}\n".encode(),
            capture_output=True,
            check=True,
        )
    report = json.loads(
        subprocess.run(
            [vegeta, "report", "-type=json"], input=attack.stdout, capture_output=True, check=True
        ).stdout
    )
    return {
        "p50_ms": report["latencies"]["50th"] / 1e6,
        "p99_ms": report["latencies"]["99th"] / 1e6,
        "success": report["success"],
        "rate": report["rate"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument("--app", default="bench.echo_app:app", help="the ASGI app to serve")
    parser.add_argument(
        "--warmup", type=int, default=WARMUP_SECONDS, help="unmeasured seconds before each case"
    )
    args = parser.parse_args()
    bodies = _bodies()
    with (
        temporary_database(postgres_admin_url()) as database_url,
        running_server(database_url, app=args.app, workers=args.workers) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        echo = _wrk(
            f"{server.url}/bench/echo",
            _lua(Path(tmp) / "echo.lua", None, bodies),
            args.seconds,
            args.connections,
            args.warmup,
        )
        script = _lua(Path(tmp) / "eval.lua", server.admin_key, bodies)
        url = f"{server.url}/v1/evaluations"
        _first_round(url, server.admin_key, bodies)
        if args.warmup > 0:  # unmeasured, and before the backends are counted
            _run_wrk(url, script, args.warmup, args.connections)
        evaluations, cpu = _cpu_of(
            server.pid,
            database_url.rsplit("/", 1)[1],
            lambda: _wrk(url, script, args.seconds, args.connections, 0),
        )
        fresh = _wrk(
            f"{server.url}/v1/evaluations",
            _lua(Path(tmp) / "fresh.lua", server.admin_key, bodies, fresh=True),
            args.seconds,
            args.connections,
            args.warmup,
        )
        target = _vegeta(
            f"{server.url}/v1/evaluations", server.admin_key, bodies[0], TARGET_RATE, args.seconds
        )
        half = max(1, int(evaluations["rps"] / 2))
        steady = _vegeta(
            f"{server.url}/v1/evaluations", server.admin_key, bodies[0], half, args.seconds
        )
    print(
        f"### HTTP API on PostgreSQL, {args.workers} uvicorn worker(s), "
        f"{args.connections} connections ({args.seconds} s each after {args.warmup} s unmeasured)\n"
    )
    print("| case | req/s | p99 | non-2xx | share of echo |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| JSON echo endpoint (baseline) | {echo['rps']:,.0f} | {echo['p99_ms']:.1f} ms "
        f"| {echo['errors']:.0f} | 100% |"
    )
    print(
        f"| POST /v1/evaluations, decision committed | {evaluations['rps']:,.0f} | "
        f"{evaluations['p99_ms']:.1f} ms | {evaluations['errors']:.0f} | "
        f"{evaluations['rps'] / echo['rps']:.0%} |"
    )
    print(
        f"| POST /v1/evaluations, every manifest new (no decision reused) | {fresh['rps']:,.0f} | "
        f"{fresh['p99_ms']:.1f} ms | {fresh['errors']:.0f} | {fresh['rps'] / echo['rps']:.0%} |"
    )
    print(
        f"| POST /v1/evaluations at a constant {TARGET_RATE}/s (vegeta) | {target['rate']:,.0f} | "
        f"{target['p99_ms']:.1f} ms (p50 {target['p50_ms']:.1f} ms) | "
        f"{(1 - target['success']) * 100:.1f}% | |"
    )
    print(
        f"| POST /v1/evaluations at half that peak ({half}/s, vegeta) | {steady['rate']:,.0f} | "
        f"{steady['p99_ms']:.1f} ms (p50 {steady['p50_ms']:.1f} ms) | "
        f"{(1 - steady['success']) * 100:.1f}% | |"
    )
    decisions = evaluations["rps"] * args.seconds
    print("\n| CPU per decision committed | µs |\n|---|---:|")
    for name, seconds in cpu.items():
        print(f"| {name} | {seconds / decisions * 1e6:,.0f} |")
    print(f"| all | {sum(cpu.values()) / decisions * 1e6:,.0f} |")


if __name__ == "__main__":
    main()
