"""The audit page query with and without its index probes (issue 24 part 4), in one run.

Run: python -m bench.bench_audit_probes [--rows 1000000] [--page 1000] [--rounds 7]

The decisions of bench/audit_data.py are filled into a scratch PostgreSQL database, then
`audit.repository.decisions_page` is timed in this process (no HTTP: the device is the
query) with `seq_range`'s probes on and, by a bench-only monkeypatch, off (the page query
bounded by the cursor alone). Cases: the two of bench_audit (first page and page --page by
cursor, whose ratio is the target: within 2x), and filters that match only old decisions,
which the probes were written for. Wall time, median of --rounds, on and off alternating.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from bench.audit_data import PRODUCTION_RULE, fill, matrix_versions
from supportgate.audit import repository
from supportgate.audit.filters import AuditFilter
from supportgate.db.engine import create_db_engine, session_factory, transaction
from supportgate.db.migrate import upgrade
from supportgate.pagination import MAX_SEQ
from tests.services import postgres_admin_url, temporary_database

LIMIT = 50


def _cursor_only(
    session: Session, where: AuditFilter, *, before_seq: int | None
) -> tuple[int, int] | None:
    return (1, MAX_SEQ if before_seq is None else before_seq - 1)


@contextmanager
def _probes(on: bool) -> Iterator[None]:
    device = repository.seq_range
    if not on:
        repository.seq_range = _cursor_only
    try:
        yield
    finally:
        repository.seq_range = device


def _time(
    sessions: sessionmaker[Session], where: AuditFilter, before_seq: int | None
) -> tuple[float, list[int]]:
    """One page in a transaction of its own, on the product's engine (its connection
    options are part of the probes' speed), as a request reads it."""
    started = time.perf_counter()
    with transaction(sessions) as session:
        rows = repository.decisions_page(session, where, before_seq=before_seq, limit=LIMIT)
    return time.perf_counter() - started, [int(row["seq"]) for row in rows]


def _keys(pages: dict[int, int | None]) -> list[tuple[int, bool]]:
    return [(page, on) for page in pages for on in (True, False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--page", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    now = datetime.now(UTC)
    oldest_version = matrix_versions(now)[0][1]
    cases = {
        "verdict=rejected&since=<90 days ago>": AuditFilter(
            verdict="rejected", since=now - timedelta(days=90)
        ),
        f"rule={PRODUCTION_RULE}": AuditFilter(rule=PRODUCTION_RULE),
        f"matrix_version={oldest_version} (the oldest)": AuditFilter(matrix_version=oldest_version),
        "until=<300 days ago>": AuditFilter(until=now - timedelta(days=300)),
        "since=<310 days ago>&until=<300 days ago>": AuditFilter(
            since=now - timedelta(days=310), until=now - timedelta(days=300)
        ),
    }
    with temporary_database(postgres_admin_url()) as url:
        upgrade(url)
        filled = fill(url, args.rows, now=now)
        print(f"filled {filled.decisions:,} decisions in {filled.seconds:.0f} s", flush=True)
        engine = create_db_engine(url)
        sessions = session_factory(engine)
        print(
            f"\n### GET /v1/audit's page query, {filled.decisions:,} decisions, "
            f"median of {args.rounds} rounds (ms)\n"
        )
        print("| filter | page | probes on | off | off/on |")
        print("|---|---:|---:|---:|---:|")
        for label, where in cases.items():
            with transaction(sessions) as session:
                deep_rows = repository.decisions_page(
                    session, where, before_seq=None, limit=(args.page - 1) * LIMIT
                )
            pages = {1: None, args.page: int(deep_rows[-1]["seq"]) if deep_rows else None}
            times: dict[tuple[int, bool], list[float]] = {key: [] for key in _keys(pages)}
            answers: dict[int, set[tuple[int, ...]]] = {page: set() for page in pages}
            for round_ in range(args.rounds + 1):  # round 0 warms the caches, untimed
                for on in (True, False) if round_ % 2 else (False, True):
                    with _probes(on):
                        for page, cursor in pages.items():
                            seconds, seqs = _time(sessions, where, cursor)
                            answers[page].add(tuple(seqs))
                            if round_:
                                times[(page, on)].append(seconds)
            for page in pages:
                assert len(answers[page]) == 1, f"{label}: the two paths disagree"
                on_ms = statistics.median(times[(page, True)]) * 1e3
                off_ms = statistics.median(times[(page, False)]) * 1e3
                print(
                    f"| {label} | {page} | {on_ms:.1f} | {off_ms:.1f} | {off_ms / on_ms:.2f}x |",
                    flush=True,
                )
        engine.dispose()


if __name__ == "__main__":
    main()
