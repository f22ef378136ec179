"""The hash chain over decisions.

Each decision row stores `prev_hash` (the hash of the row before it in `seq` order, or the
genesis hash of 64 zeros) and `hash` = sha256 over the canonical JSON (sorted keys, no
whitespace) of `prev_hash` and everything the row says: seq, id, manifest, verdict, allowed,
cause, matrix version, policy revision, input digest, evaluation time and the decision
document. The stored policy input is covered through `input_digest`, which must equal the
sha256 of the stored input text. Editing, deleting or reordering any row breaks the chain
from that row on; `supportgate audit verify` names the first row that does not fit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec

from supportgate.policy.inputs import canonical_digest, format_time

_encoder = msgspec.json.Encoder(order="sorted")


@dataclass(frozen=True, slots=True)
class ChainedFields:
    """What a decision row's hash covers (the row's columns but `hash` and `policy_input`)."""

    seq: int
    id: str
    kind: str
    name: str
    verdict: str
    allowed: bool
    cause: str
    matrix_version: str
    policy_revision: str
    input_digest: str
    evaluated_at: datetime
    document: dict[str, Any]
    prev_hash: str

    def canonical(self) -> bytes:
        return _encoder.encode(
            {
                "seq": self.seq,
                "id": self.id,
                "kind": self.kind,
                "name": self.name,
                "verdict": self.verdict,
                "allowed": self.allowed,
                "cause": self.cause,
                "matrix_version": self.matrix_version,
                "policy_revision": self.policy_revision,
                "input_digest": self.input_digest,
                "evaluated_at": format_time(self.evaluated_at),
                "document": self.document,
                "prev_hash": self.prev_hash,
            }
        )

    def hash(self) -> str:
        return hashlib.sha256(self.canonical()).hexdigest()


def input_matches_digest(policy_input: str, input_digest: str) -> bool:
    return canonical_digest(policy_input.encode()) == input_digest
