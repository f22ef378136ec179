"""Where the Merkle tree keeps its nodes: the hash of every complete subtree, by (level, index).

Node (level, index) is the root of the perfect subtree over leaves
[index * 2**level, (index + 1) * 2**level); level 0 holds the leaf hashes. A node is stored
once all of its leaves have arrived and never changes after, so the store only ever grows:
about two nodes per leaf. Partial subtrees along the right edge of a tree are never stored;
merkle.py hashes them from the complete subtrees they are made of.

The protocol takes and returns batches, so that a SQL store (supportgate.ledger.log's) reads
everything one proof needs in one query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .errors import NodeStoreError

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


class MemoryNodeStore:
    """The nodes in memory, one bytearray of 32-byte hashes per level (a node's hash is at
    offset 32 * index), so a million leaves take about 64 MB.

    `reads` counts the nodes read by `get`: what a proof costs in a store on disk.
    """

    def __init__(self) -> None:
        self._levels: list[bytearray] = []
        self.reads = 0

    def __len__(self) -> int:
        return sum(len(row) for row in self._levels) // HASH_SIZE

    def get(self, ids: Sequence[NodeId]) -> list[bytes]:
        self.reads += len(ids)
        return [self._hash_of(node) for node in ids]

    def put(self, nodes: Sequence[tuple[NodeId, bytes]]) -> None:
        for node, digest in nodes:
            if len(digest) != HASH_SIZE:
                raise NodeStoreError(f"{node}: a hash has {HASH_SIZE} bytes")
            while len(self._levels) <= node.level:
                self._levels.append(bytearray())
            row = self._levels[node.level]
            stored = len(row) // HASH_SIZE
            if node.index == stored:
                row += digest
            elif node.index > stored:
                raise NodeStoreError(
                    f"{node}: level {node.level} holds {stored} nodes; nodes arrive in order"
                )
            elif self._hash_of(node) != digest:
                raise NodeStoreError(f"{node} is stored with another hash")

    def _hash_of(self, node: NodeId) -> bytes:
        start = node.index * HASH_SIZE
        if node.level < len(self._levels) and 0 <= start < len(self._levels[node.level]):
            return bytes(self._levels[node.level][start : start + HASH_SIZE])
        raise NodeStoreError(f"{node} is not stored")
