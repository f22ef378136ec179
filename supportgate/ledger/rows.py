"""Decisions as stored rows and as the contract's Decision document: the ledger writes the
rows (decisions.py); the audit history and the tracked manifests' views read them back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from supportgate.db import Decision as DecisionRow
from supportgate.manifests.decision import Decision

DECISION_COLUMNS = (
    "seq",
    "id",
    "kind",
    "name",
    "verdict",
    "allowed",
    "cause",
    "matrix_version",
    "policy_revision",
    "input_digest",
    "evaluated_at",
    "document",
    "leaf_index",
)
"""The columns a Decision document is made of (not the stored input)."""


def decision_from_row(row: DecisionRow) -> Decision:
    return decision_from_columns({column: getattr(row, column) for column in DECISION_COLUMNS})


def decision_from_columns(values: Mapping[Any, Any]) -> Decision:
    """The Decision from a row's DECISION_COLUMNS (a Core result row's `_mapping`)."""
    return msgspec.convert(
        {
            **values["document"],
            "id": values["id"],
            "manifest": {"kind": values["kind"], "name": values["name"]},
            "verdict": values["verdict"],
            "allowed": values["allowed"],
            "matrix_version": values["matrix_version"],
            "policy_revision": values["policy_revision"],
            "input_digest": values["input_digest"],
            "evaluated_at": values["evaluated_at"],
            "cause": values["cause"],
            "leaf_index": values["leaf_index"],
        },
        Decision,
    )


def rule_pairs(document: Mapping[str, Any]) -> set[tuple[str, str]] | None:
    """The distinct (rule, severity) of a stored document's violations (its decision_rules
    rows), or None when the document holds no readable violations list."""
    try:
        return {(v["rule"], v["severity"]) for v in document.get("violations", ())}
    except (AttributeError, KeyError, TypeError):
        return None
