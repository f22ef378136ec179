"""The fleet report: counts by verdict, by rule and by owner of the fleet at a date, each
group in manifests split by verdict (docs/reports.md)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import datetime

import msgspec

from supportgate.csv_cells import encode_lines
from supportgate.manifests.decision import VERDICTS
from supportgate.policy.inputs import format_time

from .query import FleetAt, FleetManifest


class VerdictCounts(msgspec.Struct, frozen=True, kw_only=True):
    manifests: int
    supported: int
    experimental: int
    rejected: int


class RuleCounts(VerdictCounts, frozen=True, kw_only=True):
    rule: str


class OwnerCounts(VerdictCounts, frozen=True, kw_only=True):
    owner: str | None
    """None: manifests without `metadata.owner`."""


class FleetReport(msgspec.Struct, frozen=True, kw_only=True):
    """GET /v1/reports/fleet: the fleet at `as_of`."""

    as_of: datetime
    matrix_version: str | None
    policy_revision: str | None
    """The policy revision of the latest decision recorded at or before as_of."""
    by_verdict: VerdictCounts
    """The whole fleet."""
    by_rule: list[RuleCounts]
    """Rules named by the current decisions, most manifests first (ties by rule id)."""
    by_owner: list[OwnerCounts]
    """Owners, most manifests first (ties by owner; no owner last)."""


def fleet_report(fleet: FleetAt) -> FleetReport:
    by_rule: dict[str, list[FleetManifest]] = defaultdict(list)
    by_owner: dict[str | None, list[FleetManifest]] = defaultdict(list)
    for manifest in fleet.manifests:
        for rule in sorted({v.rule for v in manifest.decision.violations}):
            by_rule[rule].append(manifest)
        by_owner[manifest.owner].append(manifest)
    rules = [RuleCounts(rule=rule, **_counts(group)) for rule, group in by_rule.items()]
    owners = [OwnerCounts(owner=owner, **_counts(group)) for owner, group in by_owner.items()]
    return FleetReport(
        as_of=fleet.as_of,
        matrix_version=fleet.matrix_version,
        policy_revision=fleet.policy_revision,
        by_verdict=VerdictCounts(**_counts(fleet.manifests)),
        by_rule=sorted(rules, key=lambda row: (-row.manifests, row.rule)),
        by_owner=sorted(
            owners, key=lambda row: (row.owner is None, -row.manifests, row.owner or "")
        ),
    )


def _counts(manifests: Iterable[FleetManifest]) -> dict[str, int]:
    verdicts: Counter[str] = Counter(manifest.decision.verdict for manifest in manifests)
    return {"manifests": sum(verdicts.values()), **{v: verdicts[v] for v in VERDICTS}}


CSV_COLUMNS = (
    "group",
    "key",
    "manifests",
    "supported",
    "experimental",
    "rejected",
    "as_of",
    "matrix_version",
    "policy_revision",
)
"""One row per group: `fleet` (key empty: the whole fleet), then each `rule` and `owner` (an
empty key: no owner), in the JSON report's order. The last three columns repeat on every row
so that each row stands alone in a spreadsheet."""


def report_csv(report: FleetReport) -> bytes:
    """The report as CSV (RFC 4180 line ends; cells a spreadsheet reads as text)."""
    context = _context(report)
    rows: list[tuple[str, str, VerdictCounts]] = [("fleet", "", report.by_verdict)]
    rows += [("rule", row.rule, row) for row in report.by_rule]
    rows += [("owner", row.owner or "", row) for row in report.by_owner]
    lines = [list(CSV_COLUMNS)]
    for group, key, counts in rows:
        numbers = [counts.manifests, counts.supported, counts.experimental, counts.rejected]
        lines.append([group, key, *(str(n) for n in numbers), *context])
    return encode_lines(lines)


MANIFEST_CSV_COLUMNS = (
    "kind",
    "name",
    "owner",
    "verdict",
    "rules",
    "reasons",
    "cause",
    "evaluated_at",
    "decision_id",
    "as_of",
    "matrix_version",
    "policy_revision",
)
"""One row per manifest tracked at as_of, (kind, name) order: its current decision's verdict,
the rule ids of its violations (space-separated) and each violation as `rule (severity):
message`, one per line of the cell."""


def manifests_csv(fleet: FleetAt) -> bytes:
    context = _context(fleet)
    lines = [list(MANIFEST_CSV_COLUMNS)]
    for manifest in fleet.manifests:
        decision = manifest.decision
        lines.append(
            [
                manifest.kind,
                manifest.name,
                manifest.owner or "",
                decision.verdict,
                " ".join(sorted({v.rule for v in decision.violations})),
                "\n".join(f"{v.rule} ({v.severity}): {v.message}" for v in decision.violations),
                decision.cause,
                format_time(decision.evaluated_at),
                decision.id,
                *context,
            ]
        )
    return encode_lines(lines)


def _context(fleet: FleetAt | FleetReport) -> list[str]:
    return [format_time(fleet.as_of), fleet.matrix_version or "", fleet.policy_revision or ""]
