"""Inclusion and consistency proofs over the log's SQL node store, on a 1,000,000-leaf log.

Run: python -m bench.bench_proofs [--leaves 1000000] [--repeats 200] [--database-url URL]

The tree's nodes are made in memory (MerkleTree over a MemoryNodeStore, entries of 512
bytes) and bulk-loaded into `ledger_nodes` of a migrated database (a new SQLite file by
default; --database-url for PostgreSQL, which must be empty), with the head; no entries are
needed for proofs. Then, through supportgate.ledger.log.tree (what GET
/v1/audit/proof/inclusion calls), each proof is built in its own transaction --repeats times:
the inclusion proof of leaf 1 (the deepest path with the most partial subtrees to fold) is the
baseline, then that of the last leaf, and consistency proofs from sizes 1 and half. Target
(issue 11): the last leaf's proof within 2x of leaf 1's. Every proof is verified once.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from sqlalchemy import insert, update

from bench.bench_ledger import _entries, _median_seconds
from supportgate.db import LedgerHead, LedgerNode, create_db_engine, session_factory, transaction
from supportgate.db.migrate import upgrade
from supportgate.ledger.log import tree
from supportgate.tlog import (
    MerkleTree,
    NodeId,
    leaf_hash,
    verify_consistency,
    verify_inclusion,
)
from tests.tlog.memory_store import MemoryNodeStore

BATCH = 50_000


class _Recording(MemoryNodeStore):
    """A MemoryNodeStore that also keeps every node put, in order, for the bulk load."""

    def __init__(self) -> None:
        super().__init__()
        self.nodes: list[tuple[NodeId, bytes]] = []

    def put(self, nodes: Sequence[tuple[NodeId, bytes]]) -> None:
        super().put(nodes)
        self.nodes.extend(nodes)


def _load(url: str, leaves: int) -> bytes:
    """Fill the database's node store with a tree of `leaves`; its root."""
    store = _Recording()
    memory = MerkleTree(store)
    memory.append(_entries(leaves, 512))
    engine = create_db_engine(url)
    sessions = session_factory(engine)
    nodes = LedgerNode.__table__  # type: ignore[attr-defined]
    head = LedgerHead.__table__  # type: ignore[attr-defined]
    for start in range(0, len(store.nodes), BATCH):
        rows = [
            {"level": node.level, "idx": node.index, "hash": digest}
            for node, digest in store.nodes[start : start + BATCH]
        ]
        with transaction(sessions, write=True) as session:
            session.execute(insert(nodes), rows)
    with transaction(sessions, write=True) as session:
        session.execute(update(head).values(size=leaves, root=memory.root()))
    engine.dispose()
    return memory.root()


def _second(leaves: int) -> bytes:
    """Leaf 1's entry."""
    entries = _entries(min(leaves, 2), 512)
    next(entries)
    return next(entries)


def _median_us(operation: Callable[[], object], repeats: int) -> float:
    return _median_seconds(operation, repeats) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = args.database_url or f"sqlite:///{Path(directory) / 'proofs.db'}"
        upgrade(url)
        started = time.perf_counter()
        root = _load(url, args.leaves)
        print(f"loaded {args.leaves:,} leaves' nodes in {time.perf_counter() - started:.0f} s")
        engine = create_db_engine(url)
        sessions = session_factory(engine)
        n = args.leaves
        last_entry = list(_entries(n, 512))[-1]

        def inclusion(leaf: int) -> Callable[[], list[bytes]]:
            def prove() -> list[bytes]:
                with transaction(sessions) as session:
                    return tree(session).inclusion_proof(leaf, n)

            return prove

        def consistency(first: int) -> Callable[[], list[bytes]]:
            def prove() -> list[bytes]:
                with transaction(sessions) as session:
                    return tree(session).consistency_proof(first, n)

            return prove

        verify_inclusion(leaf_hash(_second(n)), 1, n, inclusion(1)(), root)
        verify_inclusion(leaf_hash(last_entry), n - 1, n, inclusion(n - 1)(), root)
        with transaction(sessions) as session:
            half_root = tree(session).root(n // 2)
        verify_consistency(n // 2, n, consistency(n // 2)(), half_root, root)
        rows = [
            ("inclusion, leaf 1 (baseline)", inclusion(1)),
            ("inclusion, last leaf", inclusion(n - 1)),
            ("consistency from size 1", consistency(1)),
            ("consistency from half", consistency(n // 2)),
        ]
        baseline = None
        print(f"| proof over the SQL node store, {n:,} leaves | median | ratio |")
        print("|---|---:|---:|")
        for label, operation in rows:
            median = _median_us(operation, args.repeats)
            baseline = baseline or median
            print(f"| {label} | {median:.0f} µs | {median / baseline:.2f}x |")
        engine.dispose()


if __name__ == "__main__":
    main()
