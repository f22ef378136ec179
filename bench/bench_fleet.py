"""The fleet report at a date a year back against the same report at now, on one history of
--rows decisions (default 1,000,000) and 10,000 manifests over two years, in the same run.

Run: python -m bench.bench_fleet [--rows 1000000] [--repeats 5] [--backend postgres sqlite]
PostgreSQL: a scratch database (made and dropped, as the tests make theirs); SQLite: a file in
a temporary directory. Both are migrated, then filled by bench/fleet_data.py.

What is timed: FleetService.report (supportgate/fleet/), the whole answer of
GET /v1/reports/fleet but the HTTP layer: the query (fleet_at), the decisions built and the
counts. The two moments alternate, --repeats times each after one warm-up of each; medians.
The ratio year-back / now is the requirement "within 2x". EXPLAIN of the spans query is
printed for PostgreSQL, to show which index answers it.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
from sqlalchemy import text

from bench.audit_data import conninfo
from bench.fleet_data import Filled, fill_postgres, fill_sqlite
from supportgate.db import create_db_engine, session_factory
from supportgate.db.migrate import upgrade
from supportgate.fleet.report import FleetReport
from supportgate.fleet.services import FleetService
from tests.services import postgres_admin_url, temporary_database


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _timed(service: FleetService, at: str) -> tuple[float, FleetReport]:
    start = time.perf_counter()
    report = service.report(at)
    return time.perf_counter() - start, report


def measure(database_url: str, now: datetime, repeats: int) -> dict[str, object]:
    engine = create_db_engine(database_url)
    try:
        service = FleetService(session_factory(engine))
        moments = {"now": rfc3339(now), "a year back": rfc3339(now - timedelta(days=365))}
        samples: dict[str, list[float]] = {label: [] for label in moments}
        reports: dict[str, FleetReport] = {}
        for label, at in moments.items():  # warm-up: plans, caches
            reports[label] = service.report(at)
        for _ in range(repeats):
            for label, at in moments.items():
                seconds, reports[label] = _timed(service, at)
                samples[label].append(seconds)
    finally:
        engine.dispose()
    return {
        "medians": {label: statistics.median(values) for label, values in samples.items()},
        "reports": reports,
    }


_GROUPING = (
    "SELECT leaf_index FROM tracked_spans WHERE valid_from <= %(at)s"
    " AND (valid_to IS NULL OR valid_to > %(at)s)"
)


def explain_postgres(database_url: str, at: datetime) -> str:
    with psycopg.connect(conninfo(database_url)) as connection:
        rows = connection.execute(
            "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) " + _GROUPING,
            {"at": at},
        ).fetchall()
    return "\n".join(row[0] for row in rows)


def _line(backend: str, filled: Filled, result: dict[str, object]) -> list[str]:
    medians = result["medians"]
    reports = result["reports"]
    assert isinstance(medians, dict)
    assert isinstance(reports, dict)
    now_s, back_s = medians["now"], medians["a year back"]
    now_r, back_r = reports["now"], reports["a year back"]
    return [
        f"| {backend}: fleet report at now ({now_r.by_verdict.manifests:,} manifests, "
        f"matrix {now_r.matrix_version}) | {now_s * 1000:,.0f} ms | 1.00x |",
        f"| {backend}: fleet report a year back ({back_r.by_verdict.manifests:,} manifests, "
        f"matrix {back_r.matrix_version}) | {back_s * 1000:,.0f} ms | {back_s / now_s:.2f}x |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--backend", nargs="+", choices=("postgres", "sqlite"), default=["postgres", "sqlite"]
    )
    args = parser.parse_args()
    now = datetime.now(UTC)
    lines: list[str] = []
    notes: list[str] = []
    if "postgres" in args.backend:
        with temporary_database(postgres_admin_url()) as database_url:
            upgrade(database_url)
            filled = fill_postgres(database_url, args.rows, now=now)
            notes.append(
                f"PostgreSQL: {filled.decisions:,} decisions built in {filled.seconds:.1f} s "
                f"(indexes {filled.index_seconds:.1f} s of it, VACUUM ANALYZE included)."
            )
            lines += _line("PostgreSQL", filled, measure(database_url, now, args.repeats))
            notes.append(
                "EXPLAIN of the spans open a year back:\n\n```\n"
                + explain_postgres(database_url, now - timedelta(days=365))
                + "\n```"
            )
    if "sqlite" in args.backend:
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "fleet.db"
            database_url = f"sqlite:///{path}"
            upgrade(database_url)
            filled = fill_sqlite(str(path), args.rows, now=now)
            notes.append(
                f"SQLite: {filled.decisions:,} decisions built in {filled.seconds:.1f} s "
                f"(indexes {filled.index_seconds:.1f} s of it), "
                f"{path.stat().st_size / 1e9:.2f} GB."
            )
            lines += _line("SQLite", filled, measure(database_url, now, args.repeats))
            engine = create_db_engine(database_url)
            with engine.connect() as connection:
                plan = connection.execute(
                    text("EXPLAIN QUERY PLAN " + _GROUPING.replace("%(at)s", ":at")),
                    {"at": (now - timedelta(days=365)).strftime("%Y-%m-%d %H:%M:%S.%f")},
                ).fetchall()
            engine.dispose()
            notes.append("SQLite's plan: " + "; ".join(str(row[-1]) for row in plan))
    print(f"### The fleet at a date, {args.rows:,} decisions, median of {args.repeats}\n")
    print("| case | time | ratio |")
    print("|---|---:|---:|")
    print("\n".join(lines))
    print()
    print("\n\n".join(notes))


if __name__ == "__main__":
    main()
