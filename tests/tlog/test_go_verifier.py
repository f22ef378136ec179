"""Our checkpoints and proofs, checked by implementations we did not write.

tests/tlog_verifier is a Go program over golang.org/x/mod/sumdb/note (note.Open,
note.NewVerifier) and github.com/transparency-dev/merkle (proof.VerifyInclusion,
proof.VerifyConsistency, rfc6962.DefaultHasher). Here supportgate.tlog signs checkpoints
of one log at several sizes and proves every leaf of each and the consistency of each pair;
the Go program must accept all of it, and must refuse the same fixture with one proof hash
flipped or one checkpoint edited, so that its "yes" means something.

It runs from pytest (so `./scripts/test` and CI run it), not as a separate step. Without
`go` it skips; with SUPPORTGATE_REQUIRE_OPA=1 (CI, which installs OPA with Go) it fails.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from supportgate.tlog import (
    Checkpoint,
    MerkleTree,
    NoteSigner,
    sign_checkpoint,
)
from tests.tlog.memory_store import MemoryNodeStore

from .go_verifier import run_verifier

pytestmark = pytest.mark.go

SIZES = (1, 2, 3, 7, 8, 100, 1000)
ORIGIN = "supportgate.test/tlog-verifier"


def _b64(hashes: list[bytes]) -> list[str]:
    return [base64.b64encode(digest).decode() for digest in hashes]


@pytest.fixture(scope="module")
def fixture() -> dict[str, Any]:
    """One log of 1000 entries (canonical JSON, as the ledger's will be), a signed
    checkpoint at each of SIZES, the inclusion proof of every leaf of each, and the
    consistency proof of each pair of them."""
    signer = NoteSigner.generate(ORIGIN)
    verifier_key = signer.verifier().encoded()
    entries = [f'{{"leaf":{i},"type":"decision"}}' for i in range(max(SIZES))]
    tree = MerkleTree(MemoryNodeStore())
    tree.append(entry.encode() for entry in entries)
    return {
        "verifier_key": verifier_key,
        "entries": entries,
        "checkpoints": [
            sign_checkpoint(Checkpoint(ORIGIN, size, tree.root(size)), signer) for size in SIZES
        ],
        "inclusion": [
            {
                "leaf_index": leaf,
                "tree_size": size,
                "hashes": _b64(tree.inclusion_proof(leaf, size)),
            }
            for size in SIZES
            for leaf in range(size)
        ],
        "consistency": [
            {
                "first": first,
                "second": second,
                "hashes": _b64(tree.consistency_proof(first, second)),
            }
            for first, second in combinations(SIZES, 2)
        ],
    }


def test_go_accepts_our_checkpoints_and_proofs(
    go_verifier: Path, fixture: dict[str, Any], tmp_path: Path
) -> None:
    result = run_verifier(go_verifier, fixture, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        f"verified {len(SIZES)} checkpoints, {sum(SIZES)} inclusion proofs, "
        f"{len(SIZES) * (len(SIZES) - 1) // 2} consistency proofs"
    )


def _flip_hash(encoded: str) -> str:
    raw = bytearray(base64.b64decode(encoded))
    raw[5] ^= 0x10
    return base64.b64encode(raw).decode()


def _flip_inclusion_hash(fixture: dict[str, Any]) -> None:
    proof = next(p for p in fixture["inclusion"] if p["tree_size"] == 100 and p["leaf_index"] == 42)
    proof["hashes"][3] = _flip_hash(proof["hashes"][3])


def _flip_consistency_hash(fixture: dict[str, Any]) -> None:
    proof = next(p for p in fixture["consistency"] if (p["first"], p["second"]) == (7, 1000))
    proof["hashes"][-1] = _flip_hash(proof["hashes"][-1])


def _edit_checkpoint_size(fixture: dict[str, Any]) -> None:
    fixture["checkpoints"][2] = fixture["checkpoints"][2].replace(
        f"{ORIGIN}\n3\n", f"{ORIGIN}\n4\n"
    )


def _edit_entry(fixture: dict[str, Any]) -> None:
    fixture["entries"][500] = fixture["entries"][500].replace("decision", "waiver-created")


def _drop_a_proof(fixture: dict[str, Any]) -> None:
    fixture["inclusion"].pop()


def _another_key(fixture: dict[str, Any]) -> None:
    fixture["verifier_key"] = NoteSigner.generate(ORIGIN).verifier().encoded()


@pytest.mark.parametrize(
    ("tamper", "complaint"),
    [
        (_flip_inclusion_hash, "inclusion of leaf 42 in the tree of 100"),
        (_flip_consistency_hash, "consistency 7 -> 1000"),
        (_edit_checkpoint_size, "checkpoint 2: invalid signature"),
        (_edit_entry, "inclusion of leaf 500 in the tree of 1000"),
        (_drop_a_proof, "inclusion: 999 of the 1000 leaves of the tree of 1000 have a proof"),
        (_another_key, "checkpoint 0: note has no verifiable signatures"),
    ],
)
def test_go_refuses_a_tampered_fixture(
    go_verifier: Path,
    fixture: dict[str, Any],
    tmp_path: Path,
    tamper: Callable[[dict[str, Any]], None],
    complaint: str,
) -> None:
    tampered = copy.deepcopy(fixture)
    tamper(tampered)
    result = run_verifier(go_verifier, tampered, tmp_path)
    assert result.returncode == 1
    assert complaint in result.stderr
