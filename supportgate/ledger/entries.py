"""The entries of the verifiable log as canonical JSON, the exact bytes hashed into a leaf.
The five types and their fields: docs/ledger.md, "Entries".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import msgspec

from supportgate.manifests.decision import Decision
from supportgate.policy.inputs import format_time

EntryType = Literal["decision", "matrix", "waiver-created", "waiver-deleted", "untracked"]

_canonical = msgspec.json.Encoder(order="sorted")


@dataclass(frozen=True, slots=True)
class Entry:
    type: EntryType
    recorded_at: datetime
    body: bytes


def _entry(entry_type: EntryType, recorded_at: datetime, fields: dict[str, Any]) -> Entry:
    document = {"type": entry_type, "recorded_at": format_time(recorded_at), **fields}
    return Entry(entry_type, recorded_at, _canonical.encode(document))


def decision_document(decision: Decision) -> Any:
    """A decision as the entry holds it: the API's document as JSON values (lists, not
    tuples), times in RFC 3339 UTC, without `leaf_index` (an entry does not name its own
    place: the place is what the tree proves)."""
    document = msgspec.to_builtins(decision)
    document.pop("leaf_index", None)
    document["evaluated_at"] = format_time(decision.evaluated_at)
    return document


def decision_entry(decision: Decision, *, recorded_at: datetime) -> Entry:
    return _entry("decision", recorded_at, {"decision": decision_document(decision)})


def matrix_entry(
    *,
    version: str,
    document: dict[str, Any],
    published_by: str | None,
    published_at: datetime,
    provenance: dict[str, str] | None,
) -> Entry:
    fields: dict[str, Any] = {
        "version": version,
        "document": document,
        "published_by": published_by,
    }
    if provenance is not None:  # a version read from a matrix source; posted ones have none
        fields["provenance"] = provenance
    return _entry("matrix", published_at, fields)


def waiver_created_entry(
    *,
    waiver_id: str,
    rule: str,
    kind: str,
    name: str,
    justification: str,
    expires_at: datetime,
    created_by: str,
    created_at: datetime,
) -> Entry:
    waiver = {
        "id": waiver_id,
        "rule": rule,
        "manifest": {"kind": kind, "name": name},
        "justification": justification,
        "expires_at": format_time(expires_at),
        "created_by": created_by,
    }
    return _entry("waiver-created", created_at, {"waiver": waiver})


def waiver_deleted_entry(*, waiver_id: str, deleted_by: str, deleted_at: datetime) -> Entry:
    return _entry("waiver-deleted", deleted_at, {"waiver_id": waiver_id, "deleted_by": deleted_by})


def untracked_entry(*, kind: str, name: str, untracked_by: str | None, at: datetime) -> Entry:
    return _entry(
        "untracked", at, {"manifest": {"kind": kind, "name": name}, "untracked_by": untracked_by}
    )
