"""GET /v1/audit over HTTP on a large PostgreSQL history: first page against a deep page, and
the CSV export.

Run: python -m bench.bench_audit [--rows 1000000] [--page 1000] [--repeats 20]
Needs PostgreSQL (started like the tests start it; a scratch database is made and dropped).

1. A scratch database, migrated, is filled with --rows decisions and their decision_rules
   rows inside PostgreSQL (bench/audit_data.py: what the rows look like; they are not a
   verifiable log: no entries or tree nodes), then VACUUM ANALYZEd.
2. One uvicorn worker (bench/server.py) serves it; httpx, with the admin key, asks:
   - `verdict=rejected&since=<90 days ago>&limit=50`: the first page (median of --repeats
     requests after WARM_UP), and page --page reached by following next_cursor: untimed to
     page --page-6 (in pages of 500 where it can: a cursor is a position, whatever the page
     size), then pages --page-5 .. --page each timed once, median. The ratio deep / first is
     the requirement "within 2x of each other". A query with fewer pages is timed at its
     last pages, and the row says so.
   - the same pair for `rule=port.production`.
   - `format=csv&since=<365 days ago>` streamed to /dev/null: the whole stream timed, rows/s
     and MB/s (the row count is checked against the database).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg

from bench.audit_data import PRODUCTION_RULE, conninfo, fill
from bench.server import running_server
from supportgate.db.migrate import upgrade
from tests.services import postgres_admin_url, temporary_database

LIMIT = 50
DEEP_TIMED = 6
"""Pages timed at the deep end: --page-5 .. --page."""
WALK_LIMIT = 500
"""The page size of the (untimed) walk to the deep pages: MAX_LIMIT."""
WARM_UP = 12
"""Requests before the first page is timed. psycopg prepares a statement on its 6th run on a
connection, and PostgreSQL may switch a prepared statement to its generic plan after 5 more,
so the timed requests run the plans a long-running server runs."""
TIMEOUT_S = 600.0


@dataclass(frozen=True, slots=True)
class PagePair:
    label: str
    first_s: float
    deep_s: float
    deep_page: int
    first_timed: int
    """The deep pages timed are first_timed .. deep_page."""
    last_page: bool
    """The query has no page after deep_page."""

    @property
    def ratio(self) -> float:
        return self.deep_s / self.first_s


@dataclass(frozen=True, slots=True)
class CsvExport:
    label: str
    seconds: float
    rows: int
    size: int


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _page(client: httpx.Client, params: Mapping[str, Any]) -> tuple[float, dict[str, Any]]:
    """One JSON page: (seconds to the whole body, the decoded body)."""
    start = time.perf_counter()
    response = client.get("/v1/audit", params=params)
    seconds = time.perf_counter() - start
    if response.status_code != 200:
        raise RuntimeError(f"GET /v1/audit {params}: {response.status_code} {response.text}")
    body: dict[str, Any] = response.json()
    return seconds, body


def measure_pages(
    client: httpx.Client,
    label: str,
    params: Mapping[str, Any],
    *,
    page: int,
    repeats: int,
    check: Callable[[Mapping[str, Any]], bool],
) -> PagePair:
    """The first page (median of `repeats` after WARM_UP) and page `page`, or the last page
    when there are fewer (median of it and the DEEP_TIMED - 1 pages before, each requested
    once, in order, after a walk to them along next_cursor)."""
    for _ in range(WARM_UP):
        _page(client, params)
    samples = []
    for _ in range(repeats):
        seconds, body = _page(client, params)
        samples.append(seconds)
    _check_items(body, check)
    deep = page
    cursor, consumed, exhausted = _walk(client, params, (deep - DEEP_TIMED) * LIMIT)
    if exhausted:  # fewer pages than asked for: time the last ones
        deep = min(page, -(-consumed // LIMIT))
        cursor, consumed, _ = _walk(client, params, (deep - DEEP_TIMED) * LIMIT)
    timed = []
    reached = consumed // LIMIT
    while reached < deep:
        seconds, body = _page(client, {**params, **({"cursor": cursor} if cursor else {})})
        reached += 1
        timed.append(seconds)
        cursor = body["next_cursor"]
        if cursor is None:
            break
    _check_items(body, check)
    return PagePair(
        label=label,
        first_s=statistics.median(samples),
        deep_s=statistics.median(timed),
        deep_page=reached,
        first_timed=reached - len(timed) + 1,
        last_page=cursor is None,
    )


def _walk(
    client: httpx.Client, params: Mapping[str, Any], items: int
) -> tuple[str | None, int, bool]:
    """Follow next_cursor past the first `items` matches (a multiple of LIMIT), in pages of
    WALK_LIMIT while that many are left, then of LIMIT. A cursor is a position among the
    matches whatever the page size, so this ends where as many pages of LIMIT would, in a
    tenth of the requests. Returns (the cursor there, matches passed, ran out of matches)."""
    cursor: str | None = None
    consumed = 0
    while consumed < items:
        size = WALK_LIMIT if items - consumed >= WALK_LIMIT else LIMIT
        query = {**params, "limit": size, **({"cursor": cursor} if cursor else {})}
        _, body = _page(client, query)
        consumed += len(body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            return None, consumed, True
    return cursor, consumed, False


def _check_items(body: Mapping[str, Any], check: Callable[[Mapping[str, Any]], bool]) -> None:
    items = body["items"]
    if not items:
        raise RuntimeError("no decisions match: store more (--rows)")
    if not all(check(item) for item in items):
        raise RuntimeError(f"a page does not match its filter: {items[:1]}")


def measure_csv(client: httpx.Client, label: str, params: Mapping[str, Any]) -> CsvExport:
    """The whole CSV stream, from the request to its last byte, written to /dev/null."""
    size = lines = 0
    start = time.perf_counter()
    with (
        client.stream("GET", "/v1/audit", params=params) as response,
        open(os.devnull, "wb") as sink,
    ):
        if response.status_code != 200:
            raise RuntimeError(f"CSV export: {response.status_code} {response.read()!r}")
        for chunk in response.iter_raw():
            sink.write(chunk)
            size += len(chunk)
            lines += chunk.count(b"\n")
    seconds = time.perf_counter() - start
    return CsvExport(label=label, seconds=seconds, rows=lines - 1, size=size)


def _count(database_url: str, where: str, params: Mapping[str, Any]) -> int:
    with psycopg.connect(conninfo(database_url)) as connection:
        row = connection.execute(f"SELECT count(*) FROM decisions WHERE {where}", params).fetchone()  # noqa: S608 - our constant conditions
    return int(row[0]) if row else 0


def _duration(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _pair_rows(pair: PagePair, *, asked: int, repeats: int) -> list[str]:
    which = f"page {pair.deep_page:,}"
    if pair.last_page:
        which += " (the last)" if pair.deep_page == asked else f" (the last; {asked:,} asked)"
    verdict = "within 2x" if pair.ratio <= 2 else "NOT within 2x"
    return [
        f"| {pair.label}: first page (median of {repeats}) | {_duration(pair.first_s)} | |",
        f"| {pair.label}: {which} (median of pages {pair.first_timed:,}-{pair.deep_page:,}) "
        f"| {_duration(pair.deep_s)} | {pair.ratio:.2f}x of first page ({verdict}) |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="decisions to store")
    parser.add_argument("--page", type=int, default=1000, help="the deep page to time")
    parser.add_argument("--repeats", type=int, default=20, help="first-page requests timed")
    args = parser.parse_args()
    if args.page < 1 or args.rows < 1 or args.repeats < 1:
        parser.error("--rows, --page and --repeats must be positive")

    with temporary_database(postgres_admin_url()) as database_url:
        upgrade(database_url)
        filled = fill(database_url, args.rows, now=datetime.now(UTC))
        with (
            running_server(database_url) as server,
            httpx.Client(
                base_url=server.url,
                headers={"Authorization": f"Bearer {server.admin_key}"},
                timeout=TIMEOUT_S,
            ) as client,
        ):
            now = datetime.now(UTC)
            since_90 = rfc3339(now - timedelta(days=90))
            rejected = measure_pages(
                client,
                f"`verdict=rejected&since=<90 days ago>&limit={LIMIT}`",
                {"verdict": "rejected", "since": since_90, "limit": LIMIT},
                page=args.page,
                repeats=args.repeats,
                check=lambda item: (
                    item["verdict"] == "rejected" and item["evaluated_at"] >= since_90
                ),
            )
            production = measure_pages(
                client,
                f"`rule={PRODUCTION_RULE}&limit={LIMIT}`",
                {"rule": PRODUCTION_RULE, "limit": LIMIT},
                page=args.page,
                repeats=args.repeats,
                check=lambda item: any(v["rule"] == PRODUCTION_RULE for v in item["violations"]),
            )
            since_365 = now - timedelta(days=365)
            export = measure_csv(
                client,
                "`format=csv&since=<365 days ago>`",
                {"format": "csv", "since": rfc3339(since_365)},
            )
        expected = _count(
            database_url, "evaluated_at >= %(since)s", {"since": since_365.replace(microsecond=0)}
        )
        matches = {
            "rejected": _count(
                database_url,
                "verdict = 'rejected' AND evaluated_at >= %(since)s",
                {"since": datetime.fromisoformat(since_90)},
            ),
            "rule": _count(
                database_url,
                "seq IN (SELECT decision_seq FROM decision_rules WHERE rule = %(rule)s)",
                {"rule": PRODUCTION_RULE},
            ),
        }
    if export.rows != expected:
        raise RuntimeError(f"the CSV export has {export.rows:,} rows, the database {expected:,}")

    print(f"### GET /v1/audit on PostgreSQL, one uvicorn worker, {filled.decisions:,} decisions\n")
    print(
        f"Filled {filled.decisions:,} decisions and {filled.rules:,} decision_rules rows in "
        f"{filled.seconds:.1f} s (VACUUM ANALYZE {filled.analyze_seconds:.1f} s), "
        f"{filled.table_bytes / 1e9:.2f} GB with indexes. Matches: "
        f"{matches['rejected']:,} rejected in the last 90 days, "
        f"{matches['rule']:,} with {PRODUCTION_RULE}; {LIMIT} per page.\n"
    )
    print("| case | time | ratio / throughput |")
    print("|---|---:|---:|")
    for pair in (rejected, production):
        for line in _pair_rows(pair, asked=args.page, repeats=args.repeats):
            print(line)
    print(
        f"| {export.label}, streamed to /dev/null ({export.rows:,} rows, "
        f"{export.size / 1e6:,.0f} MB) | {_duration(export.seconds)} "
        f"| {export.rows / export.seconds:,.0f} rows/s, "
        f"{export.size / 1e6 / export.seconds:.1f} MB/s |"
    )


if __name__ == "__main__":
    main()
