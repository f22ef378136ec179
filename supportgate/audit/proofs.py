"""What the verifiable log shows anyone who checks it: the latest signed checkpoint, the
verifier key, entries, and inclusion and consistency proofs (CONTRACT section 6).

Proofs may be asked for any tree size up to the head's, not only the signed ones: a client
that checks a proof against a checkpoint asks at that checkpoint's size (the latest is at
GET /v1/audit/checkpoint), since a size no checkpoint signs has no root to check against.
Every read is one short transaction; a proof reads O(log n) nodes (docs/ledger.md).
"""

from __future__ import annotations

import base64

from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import transaction
from supportgate.ledger.checkpointer import Checkpointer
from supportgate.ledger.log import entry_at, latest_checkpoint, read_head, tree
from supportgate.threads import in_thread, thread_twin
from supportgate.tlog import OutOfRange

from .views import ConsistencyProof, InclusionProof, LogEntry


class ProofService:
    def __init__(self, sessions: sessionmaker[Session], checkpointer: Checkpointer) -> None:
        self._sessions = sessions
        self._checkpointer = checkpointer

    def checkpoint(self) -> str | None:
        """The latest signed checkpoint (a signed note), None before the first."""
        with transaction(self._sessions) as session:
            latest = latest_checkpoint(session)
        return None if latest is None else latest.note

    checkpoint_in_thread = thread_twin(checkpoint)

    def verifier_key(self) -> str:
        return self._checkpointer.verifier().encoded()

    def entry(self, leaf_index: int) -> LogEntry:
        with transaction(self._sessions) as session:
            _check_leaf(leaf_index, _head_size(session))
            row = entry_at(session, leaf_index)
        if row is None:  # a gap below the head: `audit verify` names it
            raise OutOfRange(f"leaf {leaf_index} is not stored", field="leaf_index")
        return LogEntry(leaf_index=row.leaf_index, type=row.type, entry=row.entry)  # type: ignore[arg-type]  # a checked column

    entry_in_thread = thread_twin(entry)

    @in_thread
    def inclusion(self, leaf_index: int, tree_size: int) -> InclusionProof:
        with transaction(self._sessions) as session:
            _check_size(tree_size, _head_size(session), field="tree_size")
            _check_leaf(leaf_index, tree_size)
            log = tree(session, tree_size)
            leaf, hashes = log.leaf_hash(leaf_index), log.inclusion_proof(leaf_index, tree_size)
        return InclusionProof(
            leaf_index=leaf_index,
            tree_size=tree_size,
            leaf_hash=_b64(leaf),
            hashes=_all_b64(hashes),
        )

    @in_thread
    def consistency(self, first: int, second: int) -> ConsistencyProof:
        with transaction(self._sessions) as session:
            _check_size(second, _head_size(session), field="second")
            _check_size(first, second, field="first")
            hashes = tree(session, second).consistency_proof(first, second)
        return ConsistencyProof(first=first, second=second, hashes=_all_b64(hashes))


def _head_size(session: Session) -> int:
    return read_head(session).size


def _check_leaf(leaf_index: int, size: int) -> None:
    if not 0 <= leaf_index < size:
        raise OutOfRange(
            f"{leaf_index} is not a leaf of the tree of {size} entries", field="leaf_index"
        )


def _check_size(size: int, largest: int, *, field: str) -> None:
    if not 0 <= size <= largest:
        raise OutOfRange(f"{size} is not a tree size from 0 to {largest}", field=field)


def _b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode()


def _all_b64(hashes: list[bytes]) -> list[str]:
    return [_b64(digest) for digest in hashes]
