"""Decisions as stored rows and as the contract's Decision document."""

from __future__ import annotations

import msgspec

from service.db import Decision as DecisionRow
from service.manifests.decision import Decision


def decision_from_row(row: DecisionRow) -> Decision:
    """The Decision a stored row records (the 201 body, a history or audit item)."""
    return msgspec.convert(
        {
            **row.document,
            "id": row.id,
            "manifest": {"kind": row.kind, "name": row.name},
            "verdict": row.verdict,
            "allowed": row.allowed,
            "matrix_version": row.matrix_version,
            "policy_revision": row.policy_revision,
            "input_digest": row.input_digest,
            "evaluated_at": row.evaluated_at,
            "cause": row.cause,
        },
        Decision,
    )
