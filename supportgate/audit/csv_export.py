"""The audit history as CSV: one header row, then one row per decision, newest first.

Cells are written so a spreadsheet reads them as text (supportgate/csv_cells.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from supportgate.csv_cells import encode_lines
from supportgate.ledger.rows import rule_pairs
from supportgate.policy.inputs import format_time

CSV_COLUMNS = (
    "id",
    "evaluated_at",
    "kind",
    "name",
    "verdict",
    "allowed",
    "cause",
    "matrix_version",
    "policy_revision",
    "input_digest",
    "rules",
    "leaf_index",
)


def rules_cell(document: Mapping[str, Any]) -> str:
    """`rule:severity` for each distinct pair among the violations, sorted, `;`-joined."""
    return ";".join(f"{rule}:{severity}" for rule, severity in sorted(rule_pairs(document) or ()))


def csv_header() -> bytes:
    return encode_lines([CSV_COLUMNS])


def csv_rows(rows: Iterable[Mapping[Any, Any]]) -> bytes:
    """CSV lines for decision rows (DECISION_COLUMNS, as the repository reads them)."""
    return encode_lines(
        [
            row["id"],
            format_time(row["evaluated_at"]),
            row["kind"],
            row["name"],
            row["verdict"],
            "true" if row["allowed"] else "false",
            row["cause"],
            row["matrix_version"],
            row["policy_revision"],
            row["input_digest"],
            rules_cell(row["document"]),
            str(row["leaf_index"]),
        ]
        for row in rows
    )
