"""RFC 9162 section 2.1 Merkle trees over a node store. A proof reads its O(log n) nodes in
one `NodeStore.get` (why: docs/ledger.md, "The tree and its node store"); the tests' oracle is
the RFC's own recursive definitions (tests/tlog/rfc9162.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence

from .errors import InvalidProof, OutOfRange
from .nodestore import HASH_SIZE, NodeId, NodeStore

EMPTY_ROOT = hashlib.sha256(b"").digest()
"""MTH({}): the root hash of the tree of no leaves."""


def leaf_hash(entry: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


# -- which nodes a hash is made of ---------------------------------------------------------

Pieces = list[NodeId]
"""The complete subtrees, left to right, whose fold from the right is one hash of a proof."""


def range_pieces(begin: int, end: int) -> Pieces:
    """The complete subtrees of leaves [begin, end), as MTH(D[begin:end]) splits them. Only
    for ranges a tree of `end` leaves has as a subtree: `begin` is then a multiple of a power
    of two at least `end - begin`, so each piece starts at a multiple of its length."""
    pieces = []
    while begin < end:
        level = (end - begin).bit_length() - 1
        pieces.append(NodeId(level, begin >> level))
        begin += 1 << level
    return pieces


def _path_above(node: NodeId, size: int) -> list[Pieces]:
    """The inclusion path of complete subtree `node` in the tree of `size` leaves, bottom up:
    at each level the sibling of the subtree holding `node`, complete or cut off at `size`;
    a sibling that starts past `size` does not exist (the node is promoted a level)."""
    path = []
    index = node.index
    for level in range(node.level, (size - 1).bit_length()):
        begin = (index ^ 1) << level
        if begin < size:
            path.append(range_pieces(begin, min(size, begin + (1 << level))))
        index >>= 1
    return path


def consistency_plan(first: int, second: int) -> list[Pieces]:
    """PROOF(first, D[second]) is the inclusion path, in the tree of `second` leaves, of the
    largest complete subtree that ends where the tree of `first` leaves ends, preceded by
    that subtree's own hash unless it is the whole first tree (whose root the verifier has)."""
    if first in (0, second):
        return []
    level = (first & -first).bit_length() - 1
    last = NodeId(level, (first - 1) >> level)
    head = [] if last.index == 0 else [[last]]
    return head + _path_above(last, second)


def _fold(hashes: Sequence[bytes]) -> bytes:
    digest = hashes[-1]
    for left in reversed(hashes[:-1]):
        digest = node_hash(left, digest)
    return digest


class MerkleTree:
    """An append-only tree whose nodes live in a NodeStore. It keeps its frontier in memory,
    so an append reads nothing and the current root costs no read; opening a tree reads the
    frontier (at most log2(size) nodes)."""

    def __init__(self, store: NodeStore, size: int = 0) -> None:
        if size < 0:
            raise OutOfRange("a tree size is not negative", field="tree_size")
        self._store = store
        pieces = range_pieces(0, size)
        self._frontier = list(zip(pieces, store.get(pieces), strict=True))
        self._size = size

    @property
    def size(self) -> int:
        return self._size

    def append(self, entries: Iterable[bytes]) -> range:
        """Their leaf indexes; every subtree they complete is stored in one `put`."""
        first = self._size
        new_nodes: list[tuple[NodeId, bytes]] = []
        for entry in entries:
            node, digest = NodeId(0, self._size), leaf_hash(entry)
            new_nodes.append((node, digest))
            while self._frontier and self._frontier[-1][0].level == node.level:
                left, left_hash = self._frontier.pop()
                node, digest = NodeId(node.level + 1, left.index >> 1), node_hash(left_hash, digest)
                new_nodes.append((node, digest))
            self._frontier.append((node, digest))
            self._size += 1
        self._store.put(new_nodes)
        return range(first, self._size)

    def root(self, tree_size: int | None = None) -> bytes:
        """MTH of the first `tree_size` leaves (default: all of them)."""
        size = self._checked_size(tree_size)
        if size == 0:
            return EMPTY_ROOT
        if size == self._size:
            return _fold([digest for _, digest in self._frontier])
        return self._hashes([range_pieces(0, size)])[0]

    def leaf_hash(self, leaf_index: int) -> bytes:
        self._check_index(leaf_index, self._size)
        return self._store.get([NodeId(0, leaf_index)])[0]

    def inclusion_proof(self, leaf_index: int, tree_size: int | None = None) -> list[bytes]:
        """PATH(leaf_index, D[tree_size]) of RFC 9162 section 2.1.3.1."""
        size = self._checked_size(tree_size)
        self._check_index(leaf_index, size)
        return self._hashes(_path_above(NodeId(0, leaf_index), size))

    def consistency_proof(self, first: int, second: int | None = None) -> list[bytes]:
        """PROOF(first, D[second]) of RFC 9162 section 2.1.4.1 (consistency_plan says which)."""
        size = self._checked_size(second, field="second")
        if not 0 <= first <= size:
            raise OutOfRange(f"{first} is not a tree size from 0 to {size}", field="first")
        return self._hashes(consistency_plan(first, size))

    def _hashes(self, plan: list[Pieces]) -> list[bytes]:
        read = iter(self._store.get([node for pieces in plan for node in pieces]))
        return [_fold([next(read) for _ in pieces]) for pieces in plan]

    def _checked_size(self, tree_size: int | None, field: str = "tree_size") -> int:
        if tree_size is None:
            return self._size
        if not 0 <= tree_size <= self._size:
            raise OutOfRange(f"{tree_size} is not a tree size from 0 to {self._size}", field=field)
        return tree_size

    @staticmethod
    def _check_index(leaf_index: int, size: int) -> None:
        if not 0 <= leaf_index < size:
            raise OutOfRange(
                f"{leaf_index} is not a leaf of a tree of {size} leaves", field="leaf_index"
            )


def verify_inclusion(
    leaf: bytes, leaf_index: int, tree_size: int, proof: Sequence[bytes], root: bytes
) -> None:
    """RFC 9162 section 2.1.3.2 (`leaf` is a leaf hash); InvalidProof naming what fails."""
    _check_hashes(proof, root=root, leaf_hash=leaf)
    if not 0 <= leaf_index < tree_size:
        raise InvalidProof(
            f"{leaf_index} is not a leaf of a tree of {tree_size} leaves", field="leaf_index"
        )
    r = leaf
    for p, left in _walk(leaf_index, tree_size - 1, proof, hashes=len(proof)):
        r = node_hash(p, r) if left else node_hash(r, p)
    if r != root:
        raise InvalidProof("the proof does not lead to the root hash", field="hashes")


def verify_consistency(
    first: int, second: int, proof: Sequence[bytes], first_root: bytes, second_root: bytes
) -> None:
    """RFC 9162 section 2.1.4.2, whose algorithm is for 0 < first < second; as
    transparency-dev's merkle/proof does, an equal size needs an empty proof and equal roots,
    and every tree extends the empty one with an empty proof."""
    _check_hashes(proof, first_root=first_root, second_root=second_root)
    if not 0 <= first <= second:
        raise InvalidProof(f"{first} is not a tree size from 0 to {second}", field="first")
    if first in (0, second):
        if proof:
            raise InvalidProof(f"from {first} to {second} the proof is empty", field="hashes")
        if first == second and first_root != second_root:
            raise InvalidProof("trees of one size have different roots", field="second_root")
        return
    fr, sr = _consistency_roots(first, second, proof, first_root)
    if fr != first_root:
        raise InvalidProof("the proof does not lead to the first root", field="first_root")
    if sr != second_root:
        raise InvalidProof("the proof does not lead to the second root", field="second_root")


def _consistency_roots(
    first: int, second: int, proof: Sequence[bytes], first_root: bytes
) -> tuple[bytes, bytes]:
    """Steps 1 to 6 of section 2.1.4.2 (0 < first < second): the two roots the proof leads to."""
    if not proof:
        raise InvalidProof("the proof is empty", field="hashes")
    path = list(proof)
    if (first & (first - 1)) == 0:  # a power of two
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c, left in _walk(fn, sn, path[1:], hashes=len(proof)):
        if left:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
        else:
            sr = node_hash(sr, c)
    return fr, sr


def _walk(fn: int, sn: int, path: Sequence[bytes], *, hashes: int) -> Iterator[tuple[bytes, bool]]:
    """The loop both verifications share (2.1.3.2 step 4, 2.1.4.2 step 6): each hash of
    `path` with whether it is the left child where it joins (fn is a right child, or the
    last node of its level), fn and sn shifted as the RFC says. Refuses a proof of more or
    fewer than the path's `hashes` (counted as the caller was given them)."""
    for p in path:
        if sn == 0:
            raise InvalidProof(f"the proof has {hashes} hashes, too many", field="hashes")
        left = bool(fn & 1) or fn == sn
        yield p, left
        if left:
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise InvalidProof(f"the proof has {hashes} hashes, too few", field="hashes")


def _check_hashes(proof: Sequence[bytes], **named: bytes) -> None:
    for field, digest in named.items():
        if len(digest) != HASH_SIZE:
            raise InvalidProof(f"a hash has {HASH_SIZE} bytes, not {len(digest)}", field=field)
    for position, digest in enumerate(proof):
        if len(digest) != HASH_SIZE:
            raise InvalidProof(
                f"a hash has {HASH_SIZE} bytes, not {len(digest)}", field=f"hashes[{position}]"
            )
