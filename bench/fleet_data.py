"""A synthetic two-year history for the fleet-at-a-date benchmark, made inside the database
(PostgreSQL or SQLite) in a few statements: no row crosses from Python but the variants.

What the rows look like:

- N decisions (seq 1..N) over the DAYS before `now`, evenly spread in time; manifest
  `seq * 5761 mod MANIFESTS` (a permutation: every manifest is decided once in each run of
  MANIFESTS decisions, so each has about N / MANIFESTS decisions in every period): the first
  40% HardwareManifests `pool-NNNNN`, the rest DeploymentManifests `dep-NNNNN`.
- documents and policy inputs: bench/audit_data.py's variants (real decisions of the examples,
  0 to 4 real rule ids), each variant's input owned by one of OWNERS teams; verdicts 50%
  supported, 30% experimental, 20% rejected.
- matrix versions published at 0%, 30%, 60% and 85% of the span; policy revision by month.
- UNTRACKED `untracked` entries (one manifest in 50, half in each year), so the query's
  untracking step has entries to read.

Decisions hold the even leaves, untracked entries odd ones between them (so leaf order is
time order). Not a verifiable log (no tree nodes, fake ids and digests, no decision_rules
rows: the fleet query reads the violations from the documents). The secondary indexes are
dropped for the fill and rebuilt after it, as bench/audit_data.py does.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import psycopg

# the audit benchmark's fill steps: its variants' tables, and its drop and rebuild of indexes
from bench.audit_data import (
    KINDS,
    VARIANTS,
    VERDICTS,
    Variant,
    _drop_secondary,
    _load_variants,
    conninfo,
    make_variants,
)

DAYS = 730
MANIFESTS = 10_000
HARDWARE_SHARE = 0.4
OWNERS = ("infra", "ml-platform", "search", "ads", "research", "payments", "risk", "edge")
MATRIX_AT = (0.0, 0.3, 0.6, 0.85)
UNTRACKED_EVERY = 50


@dataclass(frozen=True, slots=True)
class Filled:
    decisions: int
    seconds: float
    index_seconds: float


def owned_variants() -> list[Variant]:
    """The audit benchmark's variants, each input's manifest owned by one team."""
    found = []
    for variant in make_variants():
        document = msgspec.json.decode(variant.policy_input)
        document["manifest"]["metadata"]["owner"] = OWNERS[variant.vid % len(OWNERS)]
        policy_input = msgspec.json.encode(document).decode()
        found.append(
            Variant(
                variant.vid,
                variant.kind,
                variant.verdict,
                variant.document,
                policy_input,
                variant.rules,
            )
        )
    return found


def _picks(rows: int) -> str:
    """seq, x (the fraction of the span) and the manifest / verdict / variant picks, from
    integer arithmetic both databases do alike."""
    hardware = int(MANIFESTS * HARDWARE_SHARE)
    return f"""
SELECT s AS seq, CAST((s - 0.5) / {rows}.0 AS DOUBLE PRECISION) AS x,
       (s * 5761) % {MANIFESTS} AS m,
       CASE WHEN (s * 5761) % {MANIFESTS} < {hardware} THEN 0 ELSE 1 END AS kind_index,
       CASE WHEN (s * 40503) % 65537 % 100 < 50 THEN 0
            WHEN (s * 40503) % 65537 % 100 < 80 THEN 1 ELSE 2 END AS verdict_index,
       (s * 69069) % 1000003 % {VARIANTS} AS k
FROM series"""  # noqa: S608 - numbers only


def _insert(rows: int, *, at: str, name: str, matrix: str, digits: str) -> str:
    """`digits`: SQL making 64 digits of `{n}` (a digest's place, `sha256:` + 64 digits)."""
    policy = digits.format(n="CAST(p.x * 24 AS INTEGER)")
    return f"""
INSERT INTO decisions (seq, id, kind, name, verdict, allowed, cause, matrix_version,
    policy_revision, input_digest, evaluated_at, recorded_at, document, policy_input, leaf_index)
SELECT p.seq, 'bench-' || p.seq, v.kind, {name}, v.verdict, v.verdict <> 'rejected',
       CASE WHEN p.seq % 10 < 8 THEN 'submission' ELSE 'matrix' END, {matrix},
       'sha256:' || {policy}, 'sha256:' || {digits.format(n="p.seq")}, {at}, {at},
       v.document, v.policy_input, 2 * (p.seq - 1)
FROM ({_picks(rows)}) AS p
JOIN bench_variants AS v ON v.vid = (p.kind_index * {len(VERDICTS)} + p.verdict_index)
    * {VARIANTS} + p.k"""  # noqa: S608 - numbers and fixed SQL only


def _matrix_case(versions: list[tuple[float, str]]) -> str:
    cases = " ".join(f"WHEN p.x >= {x} THEN '{v}'" for x, v in reversed(versions))
    return f"CASE {cases} END"


def matrix_versions(now: datetime) -> list[tuple[float, str]]:
    start = now - timedelta(days=DAYS)
    return [(x, f"bench.{(start + timedelta(days=DAYS * x)).date()}") for x in MATRIX_AT]


def _untracked(now: datetime, rows: int) -> list[tuple[int, str, str, datetime]]:
    """(leaf_index, type, entry, recorded_at) of the untracked entries: each takes the odd
    leaf after the decision recorded just before it (decisions hold the even leaves), so the
    log's order is the order in time, as in a real log."""
    start = now - timedelta(days=DAYS)
    hardware = int(MANIFESTS * HARDWARE_SHARE)
    found = []
    for i, m in enumerate(range(0, MANIFESTS, UNTRACKED_EVERY)):
        x = (0.25 if i % 2 else 0.75) + i / rows
        at = start + timedelta(days=DAYS * x)
        kind, name = (KINDS[0], f"pool-{m:05d}") if m < hardware else (KINDS[1], f"dep-{m:05d}")
        entry = {
            "manifest": {"kind": kind, "name": name},
            "recorded_at": at.isoformat().replace("+00:00", "Z"),
            "type": "untracked",
            "untracked_by": "bench",
        }
        leaf = 2 * int(x * rows - 0.5) + 1  # after the decision of seq int(x * rows + 0.5)
        found.append((leaf, "untracked", msgspec.json.encode(entry).decode(), at))
    return found


def _matrix_rows(now: datetime, rows: int) -> list[tuple[Any, ...]]:
    start = now - timedelta(days=DAYS)
    return [
        (version, "{}", f"digest-{i}", start + timedelta(days=DAYS * x), 2 * rows + i)
        for i, (x, version) in enumerate(matrix_versions(now))
    ]


def _spans(manifest: str) -> str:
    """The tracked spans the writer's fold (supportgate/ledger/tracking.py) makes of these
    decisions and untracked entries, in SQL: the bench writes no decision entries to replay.
    `manifest`: SQL reading `{field}` of an untracked entry's manifest. tracked_since and
    submitted_at, which the fleet does not read, are the span's start."""
    kind, name = manifest.format(field="kind"), manifest.format(field="name")
    return f"""
INSERT INTO tracked_spans (leaf_index, kind, name, decision_id, valid_from, valid_to,
    tracked_since, submitted_at)
SELECT leaf, kind, name, id, at, CASE WHEN next_at < at THEN at ELSE next_at END, at, at
FROM (
    SELECT leaf, kind, name, id, at,
           lead(at) OVER (PARTITION BY kind, name ORDER BY leaf) AS next_at
    FROM (
        SELECT leaf_index AS leaf, kind, name, id, recorded_at AS at FROM decisions
        UNION ALL
        SELECT leaf_index, {kind}, {name}, NULL, recorded_at FROM ledger_entries
        WHERE type = 'untracked'
    ) AS changes
) AS spans
WHERE id IS NOT NULL"""  # noqa: S608 - fixed SQL only


def _hardware_name(concat: str) -> str:
    hardware = int(MANIFESTS * HARDWARE_SHARE)
    return (
        f"CASE WHEN p.m < {hardware} THEN {concat.format(prefix='pool-')}"
        f" ELSE {concat.format(prefix='dep-')} END"
    )


def fill_postgres(database_url: str, rows: int, *, now: datetime) -> Filled:
    """Fill the empty, migrated PostgreSQL database, then VACUUM ANALYZE it."""
    started = time.perf_counter()
    start = now.astimezone(UTC) - timedelta(days=DAYS)
    insert = _insert(
        rows,
        at=f"TIMESTAMPTZ '{start.isoformat()}' + p.x * interval '{DAYS} days'",
        name=_hardware_name("'{prefix}' || lpad(p.m::text, 5, '0')"),
        matrix=_matrix_case(matrix_versions(now)),
        digits="lpad(({n})::text, 64, '0')",
    ).replace("FROM series", f"FROM generate_series(1::bigint, {rows}) AS s")
    with psycopg.connect(conninfo(database_url)) as connection:
        cursor = connection.cursor()
        cursor.execute("SET LOCAL maintenance_work_mem = '512MB'")
        _load_variants(cursor, owned_variants())
        recreate = _drop_secondary(cursor)
        cursor.execute(insert)
        decisions = cursor.rowcount
        indexing = time.perf_counter()
        for statement in recreate:
            cursor.execute(statement)
        index_seconds = time.perf_counter() - indexing
        cursor.executemany(
            "INSERT INTO ledger_entries (leaf_index, type, entry, recorded_at)"
            " VALUES (%s, %s, %s, %s)",
            _untracked(now, rows),
        )
        cursor.executemany(
            "INSERT INTO matrix_versions (version, document, digest, published_at, leaf_index)"
            " VALUES (%s, %s, %s, %s, %s)",
            _matrix_rows(now, rows),
        )
        cursor.execute(_spans("(entry::jsonb)->'manifest'->>'{field}'"))
        cursor.execute("DROP TABLE bench_variants, bench_variant_rules")
    with psycopg.connect(conninfo(database_url), autocommit=True) as connection:
        connection.execute("VACUUM (ANALYZE) decisions")
        connection.execute("VACUUM (ANALYZE) ledger_entries")
        connection.execute("VACUUM (ANALYZE) tracked_spans")
    return Filled(decisions, time.perf_counter() - started, index_seconds)


def _sqlite_time(moment: datetime) -> str:
    """SQLAlchemy's SQLite storage of a UTC datetime."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def fill_sqlite(path: str, rows: int, *, now: datetime) -> Filled:
    """Fill the empty, migrated SQLite file at `path`, then ANALYZE it."""
    started = time.perf_counter()
    start = now.astimezone(UTC) - timedelta(days=DAYS)
    julian = f"julianday('{_sqlite_time(start)}') + p.x * {DAYS}"
    insert = _insert(
        rows,
        # SQLite gives milliseconds: three zeros make SQLAlchemy's six-digit text
        at=f"strftime('%Y-%m-%d %H:%M:%f', {julian}) || '000'",
        name=_hardware_name("'{prefix}' || substr('0000' || p.m, -5)"),
        matrix=_matrix_case(matrix_versions(now)),
        digits="printf('%064d', {n})",
    )
    recursive = "WITH RECURSIVE series(s) AS (SELECT 1 UNION ALL SELECT s + 1 FROM series"
    series = recursive + f" WHERE s < {rows:d})"
    connection = sqlite3.connect(path)
    try:
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        indexes = connection.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'decisions'"
            " AND sql IS NOT NULL"
        ).fetchall()
        for name, _ in indexes:
            connection.execute(f'DROP INDEX "{name}"')
        connection.execute(
            "CREATE TEMP TABLE bench_variants (vid INTEGER PRIMARY KEY, kind TEXT, verdict TEXT,"
            " document TEXT, policy_input TEXT)"
        )
        connection.executemany(
            "INSERT INTO bench_variants VALUES (?, ?, ?, ?, ?)",
            [
                (v.vid, v.kind, v.verdict, msgspec.json.encode(v.document).decode(), v.policy_input)
                for v in owned_variants()
            ],
        )
        before = connection.total_changes
        connection.execute(series + insert)
        decisions = connection.total_changes - before
        indexing = time.perf_counter()
        for _, sql in indexes:
            connection.execute(sql)
        index_seconds = time.perf_counter() - indexing
        connection.executemany(
            "INSERT INTO ledger_entries (leaf_index, type, entry, recorded_at) VALUES (?, ?, ?, ?)",
            [(i, t, e, _sqlite_time(at)) for i, t, e, at in _untracked(now, rows)],
        )
        connection.executemany(
            "INSERT INTO matrix_versions (version, document, digest, published_at, leaf_index)"
            " VALUES (?, ?, ?, ?, ?)",
            [(v, d, g, _sqlite_time(at), i) for v, d, g, at, i in _matrix_rows(now, rows)],
        )
        connection.execute(_spans("json_extract(entry, '$.manifest.{field}')"))
        connection.commit()
        connection.execute("ANALYZE")
    finally:
        connection.close()
    return Filled(decisions, time.perf_counter() - started, index_seconds)
