"""The audit history as CSV: one header row, then one row per decision, newest first.

Cells are written so a spreadsheet reads them as text (OWASP, CSV injection): a cell that
starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, and the csv
module quotes any cell holding a comma, a quote or a line break (quotes doubled).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from typing import Any

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
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    """The text a spreadsheet will not read as a formula."""
    return f"'{text}" if text.startswith(_FORMULA_STARTS) else text


def rules_cell(document: Mapping[str, Any]) -> str:
    """`rule:severity` for each distinct pair among the violations, sorted, `;`-joined."""
    return ";".join(f"{rule}:{severity}" for rule, severity in sorted(rule_pairs(document) or ()))


def csv_header() -> bytes:
    return _encode([CSV_COLUMNS])


def csv_rows(rows: Iterable[Mapping[Any, Any]]) -> bytes:
    """CSV lines for decision rows (DECISION_COLUMNS, as the repository reads them)."""
    return _encode(
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


def _encode(lines: Iterable[Iterable[str]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerows([safe_cell(cell) for cell in line] for line in lines)
    return buffer.getvalue().encode()
