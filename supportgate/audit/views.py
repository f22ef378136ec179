"""Response bodies of the verifiable log's endpoints (CONTRACT section 6). Hashes are standard
base64; proofs are in RFC 9162 section 2.1.3 and 2.1.4 order."""

from __future__ import annotations

import msgspec

from supportgate.ledger.entries import EntryType


class LogEntry(msgspec.Struct, frozen=True, kw_only=True):
    leaf_index: int
    type: EntryType
    entry: str
    """The exact bytes hashed into the leaf (canonical JSON), as text."""


class InclusionProof(msgspec.Struct, frozen=True, kw_only=True):
    leaf_index: int
    tree_size: int
    leaf_hash: str
    hashes: list[str]


class ConsistencyProof(msgspec.Struct, frozen=True, kw_only=True):
    first: int
    second: int
    hashes: list[str]
