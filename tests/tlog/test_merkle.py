"""supportgate.tlog.merkle against RFC 9162 section 2.1: known answers worked out by hand
with hashlib, the RFC's own recursive definitions (rfc9162.py) for random trees, proofs that
verify and stop verifying once touched, and the node reads a proof costs."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supportgate.tlog import (
    EMPTY_ROOT,
    InvalidProof,
    MerkleTree,
    NodeId,
    NodeStoreError,
    OutOfRange,
    leaf_hash,
    node_hash,
    verify_consistency,
    verify_inclusion,
)
from tests.tlog import rfc9162
from tests.tlog.memory_store import MemoryNodeStore


def _entries(count: int, salt: str = "") -> list[bytes]:
    return [f'{{"salt":"{salt}","n":{i}}}'.encode() for i in range(count)]


def _tree(entries: list[bytes]) -> tuple[MerkleTree, MemoryNodeStore]:
    store = MemoryNodeStore()
    tree = MerkleTree(store)
    tree.append(entries)
    return tree, store


@cache
def _shared(count: int) -> tuple[list[bytes], MerkleTree, MemoryNodeStore]:
    """One tree of `count` leaves for the tests that ask about its earlier sizes."""
    entries = _entries(count, salt="common")
    return (entries, *_tree(entries))


def _flip(digest: bytes, byte: int = 0) -> bytes:
    return digest[:byte] + bytes([digest[byte] ^ 1]) + digest[byte + 1 :]


# -- known answers --------------------------------------------------------------------------


def test_the_empty_tree_hashes_to_sha256_of_nothing() -> None:
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert MerkleTree(MemoryNodeStore()).root() == EMPTY_ROOT
    assert rfc9162.mth([]) == EMPTY_ROOT


def test_leaves_and_nodes_are_hashed_with_their_prefix_byte() -> None:
    assert (
        leaf_hash(b"").hex() == "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
    )
    assert leaf_hash(b"a") == hashlib.sha256(b"\x00a").digest()
    assert (
        node_hash(b"L" * 32, b"R" * 32) == hashlib.sha256(b"\x01" + b"L" * 32 + b"R" * 32).digest()
    )


def test_a_tree_of_three_leaves_by_hand() -> None:
    """MTH(a, b, c) = H(1 || H(1 || H(0||a) || H(0||b)) || H(0||c)), and its proofs."""

    def h(data: bytes) -> bytes:
        return hashlib.sha256(data).digest()

    a, b, c = h(b"\x00a"), h(b"\x00b"), h(b"\x00c")
    ab = h(b"\x01" + a + b)
    tree, _ = _tree([b"a", b"b", b"c"])
    assert tree.root() == h(b"\x01" + ab + c)
    assert tree.root(2) == ab
    assert tree.root(1) == a
    assert tree.inclusion_proof(0) == [b, c]
    assert tree.inclusion_proof(2) == [ab]
    assert tree.inclusion_proof(1, 2) == [a]
    assert tree.consistency_proof(1) == [b, c]
    assert tree.consistency_proof(2) == [c]
    assert tree.leaf_hash(1) == b


# -- the node-store path against the RFC's definitions -------------------------------------


def _check_against_rfc(
    entries: list[bytes], tree: MerkleTree, size: int, leaf: int, first: int
) -> None:
    prefix = entries[:size]
    root = tree.root(size)
    assert root == rfc9162.mth(prefix)
    inclusion = tree.inclusion_proof(leaf, size)
    assert inclusion == rfc9162.path(leaf, prefix)
    verify_inclusion(leaf_hash(entries[leaf]), leaf, size, inclusion, root)
    consistency = tree.consistency_proof(first, size)
    assert consistency == (rfc9162.proof(first, prefix) if 0 < first < size else [])
    verify_consistency(first, size, consistency, tree.root(first), root)


def _draw_leaf_and_first(data: st.DataObject, size: int) -> tuple[int, int]:
    """A leaf of the tree of `size` leaves, and an earlier size to prove consistency from."""
    return data.draw(st.integers(0, size - 1), label="leaf"), data.draw(
        st.integers(0, size), label="first"
    )


def test_every_proof_of_every_tree_up_to_64_leaves() -> None:
    entries, tree, _ = _shared(300)
    for size in range(1, 65):
        for leaf in range(size):
            _check_against_rfc(entries, tree, size, leaf, first=leaf + 1)
        _check_against_rfc(entries, tree, size, 0, first=0)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(max_size=12), min_size=1, max_size=300), st.data())
def test_a_tree_of_random_entries_matches_the_rfc(
    entries: list[bytes], data: st.DataObject
) -> None:
    tree, _ = _tree(entries)
    _check_against_rfc(entries, tree, len(entries), *_draw_leaf_and_first(data, len(entries)))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_earlier_sizes_of_a_grown_tree_match_the_rfc(data: st.DataObject) -> None:
    entries, tree, _ = _shared(300)
    size = data.draw(st.integers(1, 300), label="size")
    _check_against_rfc(entries, tree, size, *_draw_leaf_and_first(data, size))


@pytest.mark.parametrize("size", [1023, 1024, 1025, 4097, 20_000])
def test_large_trees_match_the_rfc(size: int) -> None:
    entries = _entries(size, salt=str(size))
    tree, _ = _tree(entries)
    for leaf, first in [(0, 1), (size - 1, size - 1), (size // 2, size // 3), (7, 1000)]:
        _check_against_rfc(entries, tree, size, leaf, first)


def test_a_tree_opened_over_its_store_goes_on_where_it_stopped() -> None:
    entries = _entries(777, salt="reopen")
    store = MemoryNodeStore()
    MerkleTree(store).append(entries[:500])
    reopened = MerkleTree(store, 500)
    assert reopened.root() == rfc9162.mth(entries[:500])
    assert reopened.append(entries[500:]) == range(500, 777)
    assert reopened.root() == rfc9162.mth(entries)
    assert reopened.inclusion_proof(123) == rfc9162.path(123, entries)


def test_appending_reads_no_node() -> None:
    store = MemoryNodeStore()
    MerkleTree(store).append(_entries(1000))
    assert store.reads == 0
    # 1000 leaves, and the 994 inner nodes of the complete subtrees 512 + 256 + ... + 8
    assert len(store) == 1000 + 994


# -- verification refuses what does not hold -----------------------------------------------


def _flip_one(data: st.DataObject, proof: list[bytes]) -> list[bytes]:
    """`proof` with one bit of one of its hashes flipped."""
    at = data.draw(st.integers(0, len(proof) - 1), label="at")
    return [*proof[:at], _flip(proof[at], data.draw(st.integers(0, 31), "byte")), *proof[at + 1 :]]


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_touched_inclusion_proof_does_not_verify(data: st.DataObject) -> None:
    entries, tree, _ = _shared(300)
    size = data.draw(st.integers(2, 300), label="size")
    leaf = data.draw(st.integers(0, size - 1), label="leaf")
    proof, root = tree.inclusion_proof(leaf, size), tree.root(size)
    hashed = leaf_hash(entries[leaf])
    flipped = _flip_one(data, proof)
    with pytest.raises(InvalidProof, match="does not lead to the root"):
        verify_inclusion(hashed, leaf, size, flipped, root)
    with pytest.raises(InvalidProof):
        verify_inclusion(leaf_hash(entries[leaf] + b" "), leaf, size, proof, root)
    with pytest.raises(InvalidProof):
        verify_inclusion(hashed, leaf, size, proof, _flip(root))
    with pytest.raises(InvalidProof, match="too few"):
        verify_inclusion(hashed, leaf, size, proof[:-1], root)
    with pytest.raises(InvalidProof, match="too many"):
        verify_inclusion(hashed, leaf, size, [*proof, proof[0]], root)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_touched_consistency_proof_does_not_verify(data: st.DataObject) -> None:
    _, tree, _ = _shared(300)
    second = data.draw(st.integers(2, 300), label="second")
    first = data.draw(st.integers(1, second - 1), label="first")
    proof = tree.consistency_proof(first, second)
    roots = tree.root(first), tree.root(second)
    flipped = _flip_one(data, proof)
    with pytest.raises(InvalidProof, match=r"does not lead to the (first|second) root"):
        verify_consistency(first, second, flipped, *roots)
    # a first tree of 2**k leaves is the proof's seed, so a wrong first root shows in the second
    with pytest.raises(InvalidProof, match=r"(first|second) root"):
        verify_consistency(first, second, proof, _flip(roots[0]), roots[1])
    with pytest.raises(InvalidProof, match="second root"):
        verify_consistency(first, second, proof, roots[0], _flip(roots[1]))
    with pytest.raises(InvalidProof):
        verify_consistency(first, second, proof[:-1], *roots)


def test_the_edges_of_consistency() -> None:
    _, tree, _ = _shared(300)
    root = tree.root(5)
    verify_consistency(5, 5, [], root, root)
    verify_consistency(0, 5, [], EMPTY_ROOT, root)
    with pytest.raises(InvalidProof, match="different roots") as caught:
        verify_consistency(5, 5, [], root, tree.root(4))
    assert caught.value.field == "second_root"
    with pytest.raises(InvalidProof, match="the proof is empty"):
        verify_consistency(0, 5, [root], EMPTY_ROOT, root)
    with pytest.raises(InvalidProof, match="the proof is empty"):
        verify_consistency(4, 5, [], tree.root(4), root)
    with pytest.raises(InvalidProof) as caught:
        verify_consistency(6, 5, [], root, root)
    assert caught.value.field == "first"


def test_verification_names_the_field_that_fails() -> None:
    _, tree, _ = _shared(300)
    proof, root = tree.inclusion_proof(3, 10), tree.root(10)
    for args, field in [
        ((tree.leaf_hash(3), 10, 10, proof, root), "leaf_index"),
        ((tree.leaf_hash(3)[:31], 3, 10, proof, root), "leaf_hash"),
        ((tree.leaf_hash(3), 3, 10, [*proof[:1], b"short"], root), "hashes[1]"),
        ((tree.leaf_hash(3), 3, 10, proof, root + b"x"), "root"),
    ]:
        with pytest.raises(InvalidProof) as caught:
            verify_inclusion(*args)
        assert caught.value.field == field


def test_a_tree_refuses_leaves_and_sizes_it_does_not_have() -> None:
    _, tree, _ = _shared(300)
    calls: list[tuple[Callable[[], object], str]] = [
        (lambda: tree.inclusion_proof(300), "leaf_index"),
        (lambda: tree.inclusion_proof(5, 5), "leaf_index"),
        (lambda: tree.inclusion_proof(0, 301), "tree_size"),
        (lambda: tree.root(301), "tree_size"),
        (lambda: tree.leaf_hash(-1), "leaf_index"),
        (lambda: tree.consistency_proof(11, 10), "first"),
        (lambda: MerkleTree(MemoryNodeStore(), -1), "tree_size"),
    ]
    for call, field in calls:
        with pytest.raises(OutOfRange) as caught:
            call()
        assert caught.value.field == field


# -- the node store -------------------------------------------------------------------------


def test_the_memory_store_only_grows() -> None:
    store = MemoryNodeStore()
    store.put([(NodeId(0, 0), b"a" * 32), (NodeId(0, 1), b"b" * 32)])
    store.put([(NodeId(0, 1), b"b" * 32)])  # a retried batch
    assert store.get([NodeId(0, 1), NodeId(0, 0)]) == [b"b" * 32, b"a" * 32]
    assert store.reads == 2
    for nodes, message in [
        ([(NodeId(0, 1), b"c" * 32)], r"node \(level 0, index 1\) is stored with another hash"),
        ([(NodeId(0, 3), b"c" * 32)], "level 0 holds 2 nodes"),
        ([(NodeId(1, 0), b"c" * 31)], "a hash has 32 bytes"),
    ]:
        with pytest.raises(NodeStoreError, match=message):
            store.put(nodes)
    for missing in [NodeId(0, 2), NodeId(5, 0), NodeId(0, -1)]:
        with pytest.raises(NodeStoreError, match="is not stored"):
            store.get([missing])


def test_a_tree_over_a_store_that_lost_nodes_says_so() -> None:
    with pytest.raises(NodeStoreError, match=r"node \(level 2, index 0\) is not stored"):
        MerkleTree(MemoryNodeStore(), 4)


# -- what a proof costs ---------------------------------------------------------------------

BIG = 100_000


def _reads(store: MemoryNodeStore, call: Callable[[], object]) -> int:
    before = store.reads
    call()
    return store.reads - before


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_proof_reads_at_most_two_nodes_per_level(data: st.DataObject) -> None:
    """Up to 100,000 leaves: an inclusion proof reads <= 2 * ceil(log2 n) nodes, a consistency
    proof one more, an earlier root <= ceil(log2 n); the proofs are read, not recomputed."""
    _, tree, store = _shared(BIG)
    size = data.draw(
        st.one_of(
            st.integers(2, BIG), st.sampled_from([BIG, 2**16 - 1, 2**16 + 1, 65_535, 99_999])
        ),
        label="size",
    )
    leaf = data.draw(
        st.one_of(st.integers(0, size - 1), st.sampled_from([0, size - 1])), label="leaf"
    )
    first = data.draw(st.integers(1, size), label="first")
    levels = math.ceil(math.log2(size))
    assert _reads(store, lambda: tree.inclusion_proof(leaf, size)) <= 2 * levels
    assert _reads(store, lambda: tree.consistency_proof(first, size)) <= 2 * levels + 1
    assert _reads(store, lambda: tree.root(size)) <= levels


def test_the_proof_of_the_last_leaf_costs_as_little_as_the_first() -> None:
    _, tree, store = _shared(BIG)
    """Leaf 0's path has 16 complete siblings and the rest of the tree, [65536, 100000),
    made of one complete subtree per binary digit of 34,464; the last leaf's siblings are
    all complete."""
    first = _reads(store, lambda: tree.inclusion_proof(0))
    last = _reads(store, lambda: tree.inclusion_proof(BIG - 1))
    assert first == 16 + bin(BIG - 2**16).count("1") == 21
    assert last == len(tree.inclusion_proof(BIG - 1))
    assert last <= first
    assert _reads(store, tree.root) == 0  # the current root is the frontier's
