"""A row is what its entry says when the ledger's own encoders (ledger/entries.py) make the
entry's exact bytes of it; else the fields that differ are named. Columns no entry holds are
checked against what they are made from (docs/audit-verify.md has the table)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from supportgate.errors import ManifestError
from supportgate.ledger.entries import (
    Entry,
    matrix_entry,
    waiver_created_entry,
    waiver_deleted_entry,
)
from supportgate.ledger.rows import decision_fields, rule_pairs
from supportgate.manifests import decode_matrix
from supportgate.matrix import prepare
from supportgate.policy.inputs import canonical_digest, format_time

Row = Mapping[Any, Any]
_PUBLISHED = ("version", "document", "published_by", "published_at", "provenance")
_CREATED = ("rule", "kind", "name", "justification", "expires_at", "created_by", "created_at")


def decision_wrongs(entry: Mapping[str, Any], row: Row, rules: set[tuple[str, str]]) -> list[str]:
    """`entry` decoded: a log of a million decisions is checked without building a Decision
    for each (see _decision_entry)."""
    try:
        says = _decision_entry(row)
    except (KeyError, TypeError, ValueError):
        return ["its row is not a decision document"]
    wrong = [] if says == entry else [_differ(_differing_paths(says, entry))]
    if canonical_digest(row["policy_input"].encode()) != row["input_digest"]:
        wrong.append("its stored policy input does not match its input_digest")
    if rules != rule_pairs(row["document"]):
        wrong.append("its decision_rules rows do not match its violations")
    return wrong


def _decision_entry(row: Row) -> dict[str, Any]:
    """The decoded entry of a decision row: what
    `decision_entry(decision_from_columns(row), recorded_at=row["recorded_at"])` encodes,
    made from the columns directly."""
    if not isinstance(row["document"], dict):
        raise TypeError("the stored document is not an object")
    decision = {**decision_fields(row), "evaluated_at": format_time(row["evaluated_at"])}
    return {
        "type": "decision",
        "recorded_at": format_time(row["recorded_at"]),
        "decision": decision,
    }


def matrix_wrongs(entry: bytes, row: Row) -> list[str]:
    says = matrix_entry(**{column: row[column] for column in _PUBLISHED})
    wrong = _differences(says, entry)
    try:
        matrix = decode_matrix(msgspec.json.encode(row["document"]), fmt="json")
    except ManifestError as exc:
        return [*wrong, f"its document is not a matrix: {exc}"]
    if row["digest"] != prepare(matrix).key:
        wrong.append(f"its digest {row['digest']!r} is not the digest of its document")
    if row["effective_from"] != matrix.effective_from:
        wrong.append("its effective_from is not its document's")
    return wrong


def waiver_created_wrongs(entry: bytes, row: Row) -> list[str]:
    says = waiver_created_entry(waiver_id=row["id"], **{column: row[column] for column in _CREATED})
    return _differences(says, entry)


def waiver_deleted_wrongs(entry: bytes, row: Row) -> list[str]:
    if row["deleted_at"] is None:
        return ["its row is not marked deleted"]
    says = waiver_deleted_entry(
        waiver_id=row["id"], deleted_by=row["deleted_by"] or "", deleted_at=row["deleted_at"]
    )
    return _differences(says, entry)


def _differences(says: Entry, entry: bytes) -> list[str]:
    """Nothing when the row, encoded as an entry, is the entry; else which fields differ."""
    if says.body == entry:
        return []
    return [_differ(_differing_paths(msgspec.json.decode(says.body), msgspec.json.decode(entry)))]


def _differ(paths: list[str]) -> str:
    return f"its row differs from its entry in {', '.join(paths)} (edited after it was recorded)"


_DEPTH = 2
"""Levels of the paths named (`decision.verdict`, `waiver.expires_at`)."""


def _differing_paths(row: Any, entry: Any, prefix: str = "") -> list[str]:
    """The dotted paths, _DEPTH levels deep, where two entry documents differ."""
    if not isinstance(row, dict) or not isinstance(entry, dict) or prefix.count(".") >= _DEPTH:
        return [prefix.rstrip(".") or "the whole entry"]
    paths = []
    for key in sorted(row.keys() | entry.keys()):
        if row.get(key) != entry.get(key):
            paths.extend(_differing_paths(row.get(key), entry.get(key), f"{prefix}{key}."))
    return paths
