"""An in-memory NodeStore: the store the tests and benches build trees over."""

from __future__ import annotations

from collections.abc import Sequence

from supportgate.tlog import HASH_SIZE, NodeId, NodeStoreError


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
