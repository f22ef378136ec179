"""Decisions as stored rows and as the contract's Decision document: the ledger writes the
rows (decisions.py); the audit history and the tracked manifests' views read them back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from supportgate.db import Decision as DecisionRow
from supportgate.manifests.decision import Decision

COPIED = (
    "id",
    "verdict",
    "allowed",
    "cause",
    "matrix_version",
    "policy_revision",
    "input_digest",
    "evaluated_at",
)
"""The columns that are the Decision's fields of the same name (the stored document holds
the rest, but the manifest and leaf_index)."""
DECISION_COLUMNS = ("seq", "kind", "name", *COPIED, "document", "leaf_index")
"""The columns a Decision document is made of (not the stored input)."""


def decision_from_row(row: DecisionRow) -> Decision:
    return decision_from_columns({column: getattr(row, column) for column in DECISION_COLUMNS})


def decision_from_columns(values: Mapping[Any, Any]) -> Decision:
    """The Decision from a row's DECISION_COLUMNS (a Core result row's `_mapping`)."""
    fields = decision_fields(values)
    return msgspec.convert({**fields, "leaf_index": values["leaf_index"]}, Decision)


def decision_fields(values: Mapping[Any, Any]) -> dict[str, Any]:
    """The Decision's fields but leaf_index, as JSON values but `evaluated_at`."""
    manifest = {"kind": values["kind"], "name": values["name"]}
    return {**values["document"], "manifest": manifest, **{c: values[c] for c in COPIED}}


def rule_pairs(document: Mapping[str, Any]) -> set[tuple[str, str]] | None:
    """The distinct (rule, severity) of a stored document's violations (its decision_rules
    rows), or None when the document holds no readable violations list."""
    try:
        return {(v["rule"], v["severity"]) for v in document.get("violations", ())}
    except (AttributeError, KeyError, TypeError):
        return None
