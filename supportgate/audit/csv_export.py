"""The audit history as CSV, cells written so a spreadsheet reads them as text (csv_cells.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from supportgate.csv_cells import encode_lines
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


RULES_SEPARATOR = "; "


def rules_cell(document: Mapping[str, Any]) -> str:
    """`port.production (deny): port trial ...; support.platform (warn): ...`: the policies'
    messages hold no `;`, so a reader may split on the separator."""
    entries = {f"{v['rule']} ({v['severity']}): {v['message']}" for v in _violations(document)}
    return RULES_SEPARATOR.join(sorted(entries))


def _violations(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The stored document's violations (none when it holds no readable list)."""
    found = document.get("violations")
    if not isinstance(found, list):
        return []
    return [
        v for v in found if isinstance(v, Mapping) and {"rule", "severity", "message"} <= v.keys()
    ]


def csv_header() -> bytes:
    return encode_lines([CSV_COLUMNS])


_FORMATTED: dict[str, Callable[[Mapping[Any, Any]], str]] = {
    "evaluated_at": lambda row: format_time(row["evaluated_at"]),
    "allowed": lambda row: "true" if row["allowed"] else "false",
    "rules": lambda row: rules_cell(row["document"]),
    "leaf_index": lambda row: str(row["leaf_index"]),
}


def csv_rows(rows: Iterable[Mapping[Any, Any]]) -> bytes:
    """CSV lines for decision rows (DECISION_COLUMNS, as the repository reads them)."""
    return encode_lines(
        [_FORMATTED[c](row) if c in _FORMATTED else row[c] for c in CSV_COLUMNS] for row in rows
    )
