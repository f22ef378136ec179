"""The ledger's Merkle tree in memory: appends, and what proofs cost on a 1,000,000-leaf log.

Run: python -m bench.bench_ledger [--leaves 1000000] [--batch 1000] [--entry-bytes 512]

1. --leaves entries of --entry-bytes each (canonical-JSON-like text with the leaf's number)
   are appended to a MerkleTree over a MemoryNodeStore in batches of --batch (as a writer
   batch would), timed as a whole: per leaf, against hashing the leaf alone (SHA-256 of
   0x00 || entry), which is the part no tree can avoid.
2. On the full tree: the inclusion proof of leaves 0 and 1 and of the last leaf, consistency proofs
   from sizes 1, half and last-but-one, and the root at an earlier size: node reads (what a
   SQL store would fetch, in one query) and the median time of each over --repeats.
   Target (issue 11): the proof for the last leaf within 2x of the one for the first.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from collections.abc import Callable, Iterator

from bench.common import _duration
from supportgate.tlog import MerkleTree, verify_consistency, verify_inclusion
from tests.tlog.memory_store import MemoryNodeStore


def _entries(count: int, size: int) -> Iterator[bytes]:
    padding = "x" * size
    for leaf in range(count):
        text = f'{{"leaf_index":{leaf},"type":"decision","pad":"{padding}"}}'
        yield text[:size].encode()


def _median_seconds(operation: Callable[[], object], repeats: int) -> float:
    operation()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        operation()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _reads(store: MemoryNodeStore, operation: Callable[[], object]) -> int:
    before = store.reads
    operation()
    return store.reads - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--entry-bytes", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    n = args.leaves

    start = time.perf_counter()
    for entry in _entries(n, args.entry_bytes):
        hashlib.sha256(b"\x00" + entry).digest()
    hash_only = (time.perf_counter() - start) / n

    store = MemoryNodeStore()
    tree = MerkleTree(store)
    batch: list[bytes] = []
    start = time.perf_counter()
    for entry in _entries(n, args.entry_bytes):
        batch.append(entry)
        if len(batch) == args.batch:
            tree.append(batch)
            batch = []
    tree.append(batch)
    append = (time.perf_counter() - start) / n

    print(f"### Appending {n:,} leaves of {args.entry_bytes} B to the in-memory node store")
    print()
    print("| case | node reads | per leaf | ratio to the leaf hash |")
    print("|---|---:|---:|---:|")
    print(f"| leaf hash alone | 0 | {_duration(hash_only)} | 1.00x |")
    print(
        f"| append in batches of {args.batch} | {store.reads} | {_duration(append)} "
        f"| {append / hash_only:.2f}x |"
    )
    print(f"\nnode store: {len(store):,} nodes ({len(store) * 32 / 2**20:.1f} MiB of hashes)")
    print()
    print(f"### Proofs on the {n:,}-leaf tree (median of {args.repeats})")
    print()
    print("| case | node reads | time | ratio to leaf 0's proof |")
    print("|---|---:|---:|---:|")

    root = tree.root()
    cases: list[tuple[str, Callable[[], object]]] = [
        ("inclusion proof, leaf 0", lambda: tree.inclusion_proof(0)),
        ("inclusion proof, leaf 1", lambda: tree.inclusion_proof(1)),
        (f"inclusion proof, leaf {n - 1:,}", lambda: tree.inclusion_proof(n - 1)),
        (f"consistency proof {1:,} -> {n:,}", lambda: tree.consistency_proof(1)),
        (f"consistency proof {n // 2 + 1:,} -> {n:,}", lambda: tree.consistency_proof(n // 2 + 1)),
        (f"consistency proof {n - 1:,} -> {n:,}", lambda: tree.consistency_proof(n - 1)),
        (f"root at size {n - 1:,}", lambda: tree.root(n - 1)),
    ]
    first_time = 0.0
    for name, operation in cases:
        reads = _reads(store, operation)
        seconds = _median_seconds(operation, args.repeats)
        first_time = first_time or seconds
        print(f"| {name} | {reads} | {_duration(seconds)} | {seconds / first_time:.2f}x |")

    last_proof = tree.inclusion_proof(n - 1)
    last_leaf = tree.leaf_hash(n - 1)
    seconds = _median_seconds(
        lambda: verify_inclusion(last_leaf, n - 1, n, last_proof, root), args.repeats
    )
    print(f"| verify inclusion of leaf {n - 1:,} | 0 | {_duration(seconds)} | |")
    half = n // 2 + 1
    proof, half_root = tree.consistency_proof(half), tree.root(half)
    seconds = _median_seconds(
        lambda: verify_consistency(half, n, proof, half_root, root), args.repeats
    )
    print(f"| verify consistency {half:,} -> {n:,} | 0 | {_duration(seconds)} | |")


if __name__ == "__main__":
    main()
