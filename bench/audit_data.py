"""A synthetic audit history for benchmarks: N decisions and their decision_rules rows, made
inside PostgreSQL in a few statements.

What the rows look like:

- kind: 40% HardwareManifest, 60% DeploymentManifest; name: one of 1,000 pools or 4,000
  deployments (5,000 distinct), a few popular ones decided far more often than the rest.
- verdict: 50% supported, 30% experimental, 20% rejected, each kind and verdict with VARIANTS
  decision documents. Their claims, checklist, recommendations and stored policy input are
  those the real policies give the examples of that kind and verdict; their violations
  name 0 to 4 real rule ids from the policy catalogue (a rejected decision at least one deny
  and a supported one no support.platform; some denies waived), and decision_rules holds
  exactly the document's (rule, severity) pairs, as the recorder writes them. port.production
  is in about 10% of all decisions (most rejected deployments, a few waived).
- cause: mostly submission; matrix_version: five versions published over the year;
  policy_revision: one per month.
- evaluated_at: over the 365 days before `now`, increasing with seq, traffic growing from 1x
  to 2x over the year (about 31% of the decisions fall in the last 90 days);
  recorded_at a few milliseconds later.

The rows are NOT a verifiable log: each decision names leaf `seq - 1`, but no entry, tree
node or checkpoint is written (the audit queries never read them), ids are random UUIDs and
input_digest is not the digest of the stored input (which names the example manifest, not the
row's). `supportgate audit verify` fails on them.

The fill drops the secondary indexes, the id uniqueness constraint and the decision_rules
foreign key for the inserts and recreates them from their own definitions (pg_indexes,
pg_get_constraintdef) afterwards, all in one transaction: index builds after a bulk insert
are several times faster than maintaining five indexes row by row.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import psycopg
from sqlalchemy.engine import make_url

from bench.common import EXAMPLE_TIME, example_manifests
from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Evaluation, Evaluator, Subject
from supportgate.manifests import HardwareManifest
from supportgate.matrix import load_matrix_file, prepare
from supportgate.policy import EmbeddedEngine, PolicyBundle
from supportgate.policy.catalog import read_catalog

KINDS = ("HardwareManifest", "DeploymentManifest")
VERDICTS = ("supported", "experimental", "rejected")
VARIANTS = 64
"""Decision documents per (kind, verdict)."""
HARDWARE_NAMES = 1000
DEPLOYMENT_NAMES = 4000
DAYS = 365
MATRIX_VERSIONS = (0.0, 0.27, 0.52, 0.77, 0.93)
"""When each matrix version was published, as a fraction of the year; named by its month."""

# Rules a HardwareManifest can get (the others need a deployment: port, service, claims, ...).
_HARDWARE_RULES = ("host.", "support.platform", "support.toolkit", "port.consumer-card")
# How often a rule is picked, relative to 1 (the rules the examples show most often).
_WEIGHTS = {
    "support.platform": 8,
    "claims.correctness": 5,
    "claims.performance": 4,
    "evidence.stale": 3,
    "service.external": 3,
    "support.toolkit": 3,
    "topology.scale-up-domain": 2,
    "host.compiler": 2,
    "host.python": 2,
    "port.pinning": 2,
    "support.engine": 2,
}
PRODUCTION_RULE = "port.production"


@dataclass(frozen=True, slots=True)
class Variant:
    vid: int
    kind: str
    verdict: str
    document: dict[str, Any]
    policy_input: str
    rules: tuple[tuple[str, str], ...]
    """The distinct (rule, severity) of the document's violations: its decision_rules rows."""


@dataclass(frozen=True, slots=True)
class FillReport:
    decisions: int
    rules: int
    seconds: float
    analyze_seconds: float
    table_bytes: int


def variant_id(kind_index: int, verdict_index: int, k: int) -> int:
    return (kind_index * len(VERDICTS) + verdict_index) * VARIANTS + k


def make_variants(seed: int = 1) -> list[Variant]:
    """VARIANTS decision documents for each (kind, verdict), built on real evaluations."""
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
    catalog = read_catalog(bundle.modules)
    if PRODUCTION_RULE not in catalog:
        raise RuntimeError(f"the policy catalogue has no {PRODUCTION_RULE}")
    examples = _example_evaluations(bundle)
    texts: dict[str, tuple[str, str]] = {}  # a real message and path per rule where known
    for evaluation in examples:
        for v in evaluation.decision.violations:
            texts.setdefault(v.rule, (v.message, v.path))
    found: list[Variant] = []
    for kind_index, kind in enumerate(KINDS):
        of_kind = [e for e in examples if e.decision.manifest.kind == kind]
        eligible = sorted(
            rule
            for rule in catalog
            if kind != "HardwareManifest" or rule.startswith(_HARDWARE_RULES)
        )
        for verdict_index, verdict in enumerate(VERDICTS):
            template = next(
                (e for e in of_kind if e.decision.verdict == verdict), of_kind[0]
            ).decision
            base = msgspec.to_builtins(
                {
                    "claims": template.claims,
                    "checklist": template.checklist,
                    "recommendations": template.recommendations,
                }
            )
            policy_input = next(
                e for e in of_kind if e.decision is template
            ).policy_input.canonical.decode()
            for k in range(VARIANTS):
                chosen = _choose_rules(
                    rng, kind=kind, verdict=verdict, k=k, eligible=eligible, catalog=catalog
                )
                violations = []
                for rule, severity in chosen:
                    message, path = texts.get(rule, (catalog[rule].title, "spec"))
                    violation = {
                        "rule": rule,
                        "severity": severity,
                        "message": message,
                        "path": path,
                    }
                    if severity == "waived":
                        violation["waiver_id"] = f"wv-{rng.randrange(10**6):06d}"
                    violations.append(violation)
                violations.sort(key=lambda v: (v["rule"], v["path"], v["message"]))
                found.append(
                    Variant(
                        vid=variant_id(kind_index, verdict_index, k),
                        kind=kind,
                        verdict=verdict,
                        document={"violations": violations, **base},
                        policy_input=policy_input,
                        rules=tuple(sorted(set(chosen))),
                    )
                )
    return found


def _example_evaluations(bundle: PolicyBundle) -> list[Evaluation]:
    matrix = prepare(load_matrix_file(bundle.default_matrix_path))
    evaluator = Evaluator(EmbeddedEngine(bundle), matrix)
    hardware, deployments = example_manifests()
    pools = {m.metadata.name: m for m in hardware if isinstance(m, HardwareManifest)}
    at = datetime.fromisoformat(EXAMPLE_TIME)
    return [
        evaluator.evaluate(Subject(m), evaluated_at=at, hardware=pools.get)
        for m in hardware + deployments
    ]


def _choose_rules(
    rng: random.Random,
    *,
    kind: str,
    verdict: str,
    k: int,
    eligible: Sequence[str],
    catalog: dict[str, Any],
) -> list[tuple[str, str]]:
    """0 to 4 (rule, severity) for one variant, fitting its verdict."""
    denies = [r for r in eligible if catalog[r].severity == "deny"]
    warns = [r for r in eligible if catalog[r].severity == "warn"]
    chosen: list[tuple[str, str]] = []
    if verdict == "rejected":
        count = rng.choices((1, 2, 3, 4), weights=(30, 35, 25, 10))[0]
        if kind == "DeploymentManifest" and k % 10 < 7:
            first = PRODUCTION_RULE
        else:
            first = _pick(rng, [r for r in denies if r != PRODUCTION_RULE], ())
        chosen.append((first, "deny"))
        pool = warns + denies
    elif verdict == "experimental":
        count = rng.choices((1, 2, 3, 4), weights=(45, 30, 15, 10))[0]
        first = "support.platform" if k % 10 < 8 else _pick(rng, warns, ())
        chosen.append((first, "warn"))
        if kind == "DeploymentManifest" and k % 10 == 9:
            chosen.append((PRODUCTION_RULE, "waived"))
        pool = warns
    else:
        count = rng.choices((0, 1, 2), weights=(60, 30, 10))[0]
        pool = [r for r in warns if r != "support.platform"]
        if kind == "HardwareManifest":  # a listed platform: what would a pool be warned of?
            count = 0
    while len(chosen) < count and len(chosen) < len(pool):
        rule = _pick(rng, pool, {r for r, _ in chosen})
        chosen.append((rule, catalog[rule].severity))
    return chosen[:4]


def _pick(rng: random.Random, rules: Sequence[str], taken: Any) -> str:
    left = [r for r in rules if r not in taken]
    return rng.choices(left, weights=[_WEIGHTS.get(r, 1) for r in left])[0]


def matrix_versions(now: datetime) -> list[tuple[float, str]]:
    """(fraction of the year from which it applies, version) for the five matrix versions."""
    start = now - timedelta(days=DAYS)
    found = []
    for fraction in MATRIX_VERSIONS:
        published = start + timedelta(days=DAYS * fraction)
        found.append((fraction, f"{published.year}.{published.month}.1"))
    return found


def conninfo(database_url: str) -> str:
    """A libpq URL for a SQLAlchemy PostgreSQL URL."""
    url = make_url(database_url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


# A seq's picks come from seeded hashes of it (hashint8extended), so the decisions and the
# decision_rules statements compute the same variant for a seq. x: the fraction of the year
# at which the decision was made (density 1 + x: traffic doubles over the year).
_PICKS = """
SELECT s AS seq,
       sqrt(1 + 3 * ((s - 0.5)::float8 / %(rows)s)) - 1 AS x,
       abs(mod(hashint8extended(s, 1), 100)) AS verdict_pick,
       abs(mod(hashint8extended(s, 2), 100)) AS kind_pick,
       abs(mod(hashint8extended(s, 3), 1000000)) / 1e6::float8 AS name_pick,
       abs(mod(hashint8extended(s, 4), %(variants)s)) AS variant_pick,
       abs(mod(hashint8extended(s, 5), 100)) AS cause_pick,
       abs(mod(hashint8extended(s, 6), 250)) AS delay_ms
FROM generate_series(1::bigint, %(rows)s) AS s
"""
_VID = """(CASE WHEN p.kind_pick < 40 THEN 0 ELSE 1 END * 3
   + CASE WHEN p.verdict_pick < 50 THEN 0 WHEN p.verdict_pick < 80 THEN 1 ELSE 2 END)
   * %(variants)s + p.variant_pick"""
_INSERT_DECISIONS = f"""
INSERT INTO decisions (seq, id, kind, name, verdict, allowed, cause, matrix_version,
    policy_revision, input_digest, evaluated_at, recorded_at, document, policy_input,
    leaf_index)
SELECT p.seq,
       gen_random_uuid()::text,
       v.kind,
       CASE WHEN v.kind = 'HardwareManifest'
            THEN (ARRAY['h100', 'b200', 'ascend950', 'mi300x', 'rtx4090'])[1 + mod(
                     floor(p.name_pick * p.name_pick * {HARDWARE_NAMES})::int, 5)]
                 || '-pool-' || lpad(floor(p.name_pick * p.name_pick * {HARDWARE_NAMES})::text,
                                     4, '0')
            ELSE (ARRAY['v41-flash', 'r2-chat', 'coder-33b', 'embed-l'])[1 + mod(
                     floor(p.name_pick * p.name_pick * {DEPLOYMENT_NAMES})::int, 4)]
                 || '-' || lpad(floor(p.name_pick * p.name_pick * {DEPLOYMENT_NAMES})::text,
                                4, '0')
       END,
       v.verdict,
       v.verdict <> 'rejected',
       CASE WHEN p.cause_pick < 85 THEN 'submission' WHEN p.cause_pick < 90 THEN 'hardware'
            WHEN p.cause_pick < 94 THEN 'matrix' WHEN p.cause_pick < 97 THEN 'policy'
            WHEN p.cause_pick < 99 THEN 'waiver' ELSE 'schedule' END,
       %(matrix_case)s,
       'sha256:' || encode(sha256(convert_to('policy-' || floor(p.x * 12)::int::text, 'UTF8')),
                           'hex'),
       'sha256:' || encode(sha256(int8send(-p.seq)), 'hex'),
       %(start)s::timestamptz + p.x * interval '{DAYS} days',
       %(start)s::timestamptz + p.x * interval '{DAYS} days'
           + (5 + p.delay_ms) * interval '1 millisecond',
       v.document,
       v.policy_input,
       p.seq - 1
FROM ({_PICKS}) AS p
JOIN bench_variants AS v ON v.vid = {_VID}
"""  # noqa: S608 - constants only; values are bound parameters
_INSERT_RULES = f"""
INSERT INTO decision_rules (decision_seq, rule, severity)
SELECT p.seq, r.rule, r.severity
FROM ({_PICKS}) AS p
JOIN bench_variant_rules AS r ON r.vid = {_VID}
"""  # noqa: S608 - constants only; values are bound parameters


def fill(database_url: str, rows: int, *, now: datetime) -> FillReport:
    """Append `rows` decisions (seq 1..rows) to the empty, migrated database, then VACUUM
    ANALYZE it (so index-only scans work at once, as they would after autovacuum)."""
    variants = make_variants()
    start_time = time.perf_counter()
    start = now.astimezone(UTC) - timedelta(days=DAYS)
    matrix_case = "CASE " + " ".join(
        f"WHEN p.x >= {fraction} THEN '{version}'"
        for fraction, version in reversed(matrix_versions(now))
    )
    matrix_case += " END"
    params: dict[str, Any] = {"rows": rows, "variants": VARIANTS, "start": start}
    with psycopg.connect(conninfo(database_url)) as connection:
        cursor = connection.cursor()
        cursor.execute("SET LOCAL maintenance_work_mem = '512MB'")
        cursor.execute("SET LOCAL work_mem = '64MB'")
        _load_variants(cursor, variants)
        recreate = _drop_secondary(cursor)
        insert = _INSERT_DECISIONS.replace("%(matrix_case)s", matrix_case)
        cursor.execute(insert, params)
        decisions = cursor.rowcount
        cursor.execute(_INSERT_RULES, params)
        rules = cursor.rowcount
        for statement in recreate:
            cursor.execute(statement)
        cursor.execute("DROP TABLE bench_variants, bench_variant_rules")
    filled = time.perf_counter()
    with psycopg.connect(conninfo(database_url), autocommit=True) as connection:
        connection.execute("VACUUM (ANALYZE) decisions")
        connection.execute("VACUUM (ANALYZE) decision_rules")
        size = connection.execute(
            "SELECT pg_total_relation_size('decisions') + pg_total_relation_size('decision_rules')"
        ).fetchone()
    return FillReport(
        decisions=decisions,
        rules=rules,
        seconds=filled - start_time,
        analyze_seconds=time.perf_counter() - filled,
        table_bytes=int(size[0]) if size else 0,
    )


def _load_variants(cursor: psycopg.Cursor[Any], variants: Sequence[Variant]) -> None:
    cursor.execute(
        "CREATE TEMP TABLE bench_variants (vid int PRIMARY KEY, kind text, verdict text,"
        " document jsonb, policy_input text)"
    )
    cursor.execute("CREATE TEMP TABLE bench_variant_rules (vid int, rule text, severity text)")
    with cursor.copy("COPY bench_variants FROM STDIN") as copy:
        for v in variants:
            document = msgspec.json.encode(v.document).decode()
            copy.write_row((v.vid, v.kind, v.verdict, document, v.policy_input))
    with cursor.copy("COPY bench_variant_rules FROM STDIN") as copy:
        for v in variants:
            for rule, severity in v.rules:
                copy.write_row((v.vid, rule, severity))
    cursor.execute("ANALYZE bench_variants")
    cursor.execute("ANALYZE bench_variant_rules")


def _drop_secondary(cursor: psycopg.Cursor[Any]) -> list[str]:
    """Drop the non-primary-key indexes and constraints of decisions and decision_rules, and
    the foreign keys to decisions (manifests.latest_decision_id needs the unique id); return
    the statements that recreate them exactly: indexes, unique constraints, foreign keys."""
    constraints = cursor.execute(
        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE (conrelid IN ('decisions'::regclass, 'decision_rules'::regclass)"
        " AND contype IN ('u', 'f')) OR confrelid = 'decisions'::regclass"
        " ORDER BY contype, conname"
    ).fetchall()
    indexes = cursor.execute(
        "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i"
        " WHERE i.indrelid IN ('decisions'::regclass, 'decision_rules'::regclass)"
        " AND NOT i.indisprimary AND NOT EXISTS"
        " (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)"
        " ORDER BY 1"
    ).fetchall()
    for table, name, _ in constraints:
        cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
    for name, _ in indexes:
        cursor.execute(f"DROP INDEX {name}")
    recreate = [definition for _, definition in indexes]
    recreate += [
        f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}'
        for table, name, definition in reversed(constraints)  # unique before foreign keys
    ]
    return recreate
