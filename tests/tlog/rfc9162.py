"""RFC 9162 section 2.1 as the RFC writes it: MTH, PATH and PROOF, recursive over the list of
entries. Each call hashes every entry it covers, so this is the plain version that
supportgate/tlog/merkle.py's node-store path is tested against, never the one the service uses.
"""

from __future__ import annotations

from collections.abc import Sequence

from supportgate.tlog import EMPTY_ROOT, leaf_hash, node_hash


def _split(n: int) -> int:
    return 1 << ((n - 1).bit_length() - 1)


def mth(entries: Sequence[bytes]) -> bytes:
    """Section 2.1.1: the Merkle Tree Hash of `entries`."""
    n = len(entries)
    if n == 0:
        return EMPTY_ROOT
    if n == 1:
        return leaf_hash(entries[0])
    k = _split(n)
    return node_hash(mth(entries[:k]), mth(entries[k:]))


def path(m: int, entries: Sequence[bytes]) -> list[bytes]:
    """Section 2.1.3.1: PATH(m, D[n]), the inclusion proof of leaf m."""
    n = len(entries)
    if n == 1:
        return []
    k = _split(n)
    if m < k:
        return [*path(m, entries[:k]), mth(entries[k:])]
    return [*path(m - k, entries[k:]), mth(entries[:k])]


def proof(m: int, entries: Sequence[bytes]) -> list[bytes]:
    """Section 2.1.4.1: PROOF(m, D[n]), the consistency proof from the first m leaves."""
    return _subproof(m, entries, complete=True)


def _subproof(m: int, entries: Sequence[bytes], *, complete: bool) -> list[bytes]:
    n = len(entries)
    if m == n:
        return [] if complete else [mth(entries)]
    k = _split(n)
    if m <= k:
        return [*_subproof(m, entries[:k], complete=complete), mth(entries[k:])]
    return [*_subproof(m - k, entries[k:], complete=False), mth(entries[:k])]
