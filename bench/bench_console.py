"""The console's pages over real HTTP on a 100,000-decision PostgreSQL history: how long each
page's GET takes, against GET /health/live on the same server as the baseline.

Run: python -m bench.bench_console [--rows 100000] [--repeats 20]
Needs PostgreSQL (started like the tests start it; a scratch database is made and dropped).

1. A scratch database, migrated, is filled with --rows decisions (bench/audit_data.py: 5,000
   manifests, five matrix versions over a year, popular manifests decided far more often),
   and every (kind, name) among them is tracked with its latest decision as the current one
   (content: the manifest of that decision's stored policy input; owners spread over three
   teams). A second matrix version (H100 listed) is published, so the matrix page has a
   diff to show. The re-evaluation sweeps that the server's start and the publish set off
   (recording a decision per tracked manifest each) are waited for: pages are timed on an
   idle server, over the filled decisions plus the sweeps' (the table says how many).
2. One uvicorn worker (bench/server.py) serves it. An httpx client logs in through the
   console's form (CSRF token and all) as an admin and asks each page WARM_UP times, then
   --repeats times timed: median and 95th percentile of the whole request (headers and
   body read), and the median's ratio to /health/live's. The requirement is < 300 ms each.
   The manifest page is the most decided manifest (its timeline charts the latest 500
   decisions), and the audit pages include a rule filter and a deep cursor page.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx
import psycopg

from bench.audit_data import PRODUCTION_RULE, conninfo, fill
from bench.server import running_server
from supportgate.console.session import CSRF_COOKIE, CSRF_FIELD
from supportgate.db.migrate import upgrade
from tests.services import postgres_admin_url, temporary_database

WARM_UP = 5
TIMEOUT_S = 120.0
BUDGET_MS = 300.0
DEEP_PAGES = 20
"""The audit page reached by following this many next-page links, timed as "deep"."""

_TRACK = """
INSERT INTO manifests (kind, name, owner, content, content_digest, hardware_ref,
    latest_decision_id, latest_verdict, created_at, updated_at, last_evaluated_at)
SELECT DISTINCT ON (kind, name)
       kind, name,
       (ARRAY['infra', 'ml-platform', 'research'])[1 + abs(mod(hashtext(name), 3))],
       jsonb_set(policy_input::jsonb -> 'manifest', '{metadata,name}', to_jsonb(name)),
       input_digest, NULL, id, verdict, evaluated_at, evaluated_at, evaluated_at
FROM decisions
ORDER BY kind, name, seq DESC
"""
_POPULAR = """
SELECT kind, name, count(*) FROM decisions GROUP BY kind, name ORDER BY count(*) DESC LIMIT 1
"""
_NEXT = re.compile(r'<a class="next" href="\?([^"]+)"')
SWEEP_TIMEOUT_S = 900.0


@dataclass(frozen=True, slots=True)
class Timing:
    label: str
    path: str
    median_s: float
    p95_s: float
    bytes: int


def track(database_url: str) -> tuple[int, tuple[str, str, int]]:
    """Track every manifest the history names; (how many, the most decided one and its count)."""
    with psycopg.connect(conninfo(database_url)) as connection:
        tracked = connection.execute(_TRACK).rowcount
        popular = connection.execute(_POPULAR).fetchone()
        connection.execute("ANALYZE manifests")
    assert popular is not None
    return tracked, (str(popular[0]), str(popular[1]), int(popular[2]))


def wait_for_sweeps(database_url: str) -> float:
    """Wait until no re-evaluation sweep is queued or running (the server starts one when the
    stored decisions name other policy revisions, a publish starts one): pages are timed on an
    idle server. The seconds waited."""
    started = time.monotonic()
    with psycopg.connect(conninfo(database_url), autocommit=True) as connection:
        while True:
            row = connection.execute(
                "SELECT count(*) FROM sweeps WHERE status IN ('queued', 'running')"
            ).fetchone()
            if row is not None and row[0] == 0:
                return time.monotonic() - started
            if time.monotonic() - started > SWEEP_TIMEOUT_S:
                raise RuntimeError("a re-evaluation sweep is still running")
            time.sleep(1.0)


def count_decisions(database_url: str) -> int:
    with psycopg.connect(conninfo(database_url)) as connection:
        row = connection.execute("SELECT count(*) FROM decisions").fetchone()
    return int(row[0]) if row else 0


def log_in(client: httpx.Client, key: str) -> None:
    client.get("/ui/login").raise_for_status()
    response = client.post("/ui/login", data={"key": key, CSRF_FIELD: client.cookies[CSRF_COOKIE]})
    if response.status_code != 303:
        raise RuntimeError(f"login failed: {response.status_code} {response.text[:200]}")


def publish_second_version(client: httpx.Client, key: str) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    current = client.get("/v1/matrix", headers=headers).raise_for_status().json()["document"]
    current.pop("effective_from", None)
    current["version"] = "bench.2"
    current["engines"]["deepinfer"]["platforms"].append(
        {"vendor": "nvidia", "arch": "sm90", "toolkit": {"name": "cuda", "min": "12.4"}}
    )
    client.post("/v1/matrix", json=current, headers=headers).raise_for_status()


def deep_audit_path(client: httpx.Client, query: str) -> str:
    """The audit page DEEP_PAGES next-page links after the first page of `query`."""
    path = f"/ui/audit?{query}"
    for _ in range(DEEP_PAGES):
        found = _NEXT.search(client.get(path).raise_for_status().text)
        if found is None:
            break
        path = "/ui/audit?" + found.group(1).replace("&amp;", "&")
    return path


def time_page(client: httpx.Client, label: str, path: str, repeats: int) -> Timing:
    size = 0
    for _ in range(WARM_UP):
        response = client.get(path)
        if response.status_code != 200:
            raise RuntimeError(f"{path}: {response.status_code} {response.text[:300]}")
        size = len(response.content)
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        client.get(path).raise_for_status()
        samples.append(time.perf_counter() - started)
    samples.sort()
    p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
    return Timing(label, path, statistics.median(samples), p95, size)


def table(timings: list[Timing], baseline: Timing, *, rows: int, tracked: int) -> str:
    lines = [
        f"### Console pages, {rows:,} decisions, {tracked:,} tracked manifests (PostgreSQL)",
        "",
        "| page | median | p95 | ratio to /health/live | body | < 300 ms |",
        "|---|---:|---:|---:|---:|:-:|",
    ]
    for t in [baseline, *timings]:
        ok = "yes" if t.p95_s * 1000 < BUDGET_MS else "NO"
        lines.append(
            f"| {t.label} | {t.median_s * 1000:.1f} ms | {t.p95_s * 1000:.1f} ms "
            f"| {t.median_s / baseline.median_s:.1f}x | {t.bytes / 1024:.0f} KiB | {ok} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="decisions to store")
    parser.add_argument("--repeats", type=int, default=20, help="timed requests per page")
    args = parser.parse_args()
    if args.rows < 1 or args.repeats < 1:
        parser.error("--rows and --repeats must be positive")

    with temporary_database(postgres_admin_url()) as database_url:
        upgrade(database_url)
        now = datetime.now(UTC)
        fill(database_url, args.rows, now=now)
        tracked, (kind, name, decided) = track(database_url)
        with (
            running_server(database_url) as server,
            httpx.Client(base_url=server.url, timeout=TIMEOUT_S) as client,
        ):
            time.sleep(2.0)  # a sweep the start asks for is queued by now
            wait_for_sweeps(database_url)
            publish_second_version(client, server.admin_key)
            time.sleep(2.0)
            wait_for_sweeps(database_url)
            log_in(client, server.admin_key)
            since = (now - timedelta(days=90)).replace(microsecond=0).isoformat()
            rule_query = httpx.QueryParams({"rule": PRODUCTION_RULE, "since": since})
            pages: list[tuple[str, str]] = [
                ("manifests", "/ui/manifests"),
                (
                    "manifests, verdict + rule",
                    f"/ui/manifests?verdict=rejected&rule={PRODUCTION_RULE}",
                ),
                ("manifests, owner + kind", "/ui/manifests?owner=infra&kind=HardwareManifest"),
                (
                    f"manifest timeline + diff ({decided:,} decisions)",
                    f"/ui/manifests/{kind}/{name}",
                ),
                ("audit", "/ui/audit"),
                ("audit, rule + since 90 days", f"/ui/audit?{rule_query}"),
                ("audit, name", f"/ui/audit?name={name}"),
                (f"audit, page {DEEP_PAGES + 1}", deep_audit_path(client, "verdict=rejected")),
                ("matrix versions + diff", "/ui/matrix"),
                ("impact form", "/ui/impact"),
                ("alerts", "/ui/alerts"),
                ("webhooks", "/ui/webhooks"),
                ("waivers", "/ui/waivers"),
            ]
            baseline = time_page(
                client, "`GET /health/live` (baseline)", "/health/live", args.repeats
            )
            timings = [time_page(client, label, path, args.repeats) for label, path in pages]
        decisions = count_decisions(database_url)
    print(table(timings, baseline, rows=decisions, tracked=tracked))


if __name__ == "__main__":
    main()
