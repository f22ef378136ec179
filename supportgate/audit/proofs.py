"""What the verifiable log shows anyone who checks it (CONTRACT section 6, docs/ledger.md)."""

from __future__ import annotations

import base64

from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import LedgerEntry, transaction
from supportgate.ledger.checkpointer import Checkpointer
from supportgate.ledger.log import latest_checkpoint, read_head, tree
from supportgate.threads import in_thread, thread_twin
from supportgate.tlog import OutOfRange

from .views import ConsistencyProof, InclusionProof, LogEntry


class ProofService:
    def __init__(self, sessions: sessionmaker[Session], checkpointer: Checkpointer) -> None:
        self._sessions = sessions
        self._checkpointer = checkpointer

    def checkpoint(self) -> str | None:
        with transaction(self._sessions) as session:
            latest = latest_checkpoint(session)
        return None if latest is None else latest.note

    checkpoint_in_thread = thread_twin(checkpoint)

    def verifier_key(self) -> str:
        return self._checkpointer.verifier().encoded()

    def entry(self, leaf_index: int) -> LogEntry:
        with transaction(self._sessions) as session:
            size = read_head(session).size
            row = session.get(LedgerEntry, leaf_index) if 0 <= leaf_index < size else None
        if row is None:  # past the head, or a gap below it (`audit verify` names that)
            raise OutOfRange(
                f"the log of {size} entries has no leaf {leaf_index}", field="leaf_index"
            )
        return LogEntry(leaf_index=row.leaf_index, type=row.type, entry=row.entry)  # type: ignore[arg-type]  # a checked column

    entry_in_thread = thread_twin(entry)

    @in_thread
    def inclusion(self, leaf_index: int, tree_size: int) -> InclusionProof:
        with transaction(self._sessions) as session:
            log = tree(session)
            hashes = log.inclusion_proof(leaf_index, tree_size)
            leaf = log.leaf_hash(leaf_index)
        return InclusionProof(
            leaf_index=leaf_index,
            tree_size=tree_size,
            leaf_hash=_b64(leaf),
            hashes=[_b64(digest) for digest in hashes],
        )

    @in_thread
    def consistency(self, first: int, second: int) -> ConsistencyProof:
        with transaction(self._sessions) as session:
            hashes = tree(session).consistency_proof(first, second)
        return ConsistencyProof(first=first, second=second, hashes=[_b64(h) for h in hashes])


def _b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode()
