"""Where the Merkle tree keeps the hash of every complete subtree, by (level, index), once
all its leaves have arrived. Batches in and out, so that a SQL store reads everything one
proof needs in one query."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

HASH_SIZE = 32


@dataclass(frozen=True, slots=True)
class NodeId:
    """A complete subtree: `level` is its height (0 for a leaf), `index` its place in the
    level, counting from the left."""

    level: int
    index: int

    def __str__(self) -> str:
        return f"node (level {self.level}, index {self.index})"


class NodeStore(Protocol):
    def get(self, ids: Sequence[NodeId]) -> list[bytes]:
        """The hashes of `ids`, in their order; NodeStoreError when one is not stored."""
        ...

    def put(self, nodes: Sequence[tuple[NodeId, bytes]]) -> None:
        """Store new nodes. Storing a node again with the same hash is allowed (a retried
        batch); with another hash, or past a gap in its level, it is a NodeStoreError."""
        ...
