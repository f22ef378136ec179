"""`supportgate audit verify`: walk the decision hash chain and name the first record that is off.

The chain is read in seq order, CHUNK rows per short transaction. For each decision: its seq
follows the one before it (no gap: nothing was deleted), its `prev_hash` is the hash of the
decision before it (the genesis hash for the first), its `hash` is the sha256 of what it says
(chain.ChainedFields: nothing was edited), its stored policy input has its `input_digest`, and
its `decision_rules` rows (what `GET /v1/audit?rule=` searches) are its violations' rules.
Last, the audit head must name the last decision's seq and hash, and no decision may lie
beyond the head.

The head is read first and the walk stops at its seq, so decisions appended while the walk
runs are left for the next run instead of being mistaken for tampering.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import AUDIT_GENESIS_HASH, transaction

from . import repository
from .chain import ChainedFields, input_matches_digest
from .rows import rule_pairs

CHUNK = 1000


@dataclass(frozen=True, slots=True)
class ChainProblem:
    """The first record that does not fit, and what is wrong with it."""

    seq: int
    id: str | None
    what: str

    def describe(self) -> str:
        record = f"seq {self.seq} (id {self.id})" if self.id else f"seq {self.seq}"
        return f"audit chain broken at {record}: {self.what}"


@dataclass(frozen=True, slots=True)
class ChainReport:
    decisions: int
    head_hash: str
    problem: ChainProblem | None

    @property
    def intact(self) -> bool:
        return self.problem is None

    def summary(self) -> str:
        if self.problem is not None:
            return self.problem.describe()
        return f"audit chain intact: {self.decisions} decisions, head {self.head_hash}"


def verify_chain(sessions: sessionmaker[Session], *, chunk: int = CHUNK) -> ChainReport:
    with transaction(sessions) as session:
        head = repository.head(session)
    if head is None:
        return ChainReport(
            0, AUDIT_GENESIS_HASH, ChainProblem(0, None, "the audit head is missing")
        )
    head_seq, head_hash = head
    walk = _Walk()
    while walk.seq < head_seq:
        with transaction(sessions) as session:
            rows = repository.chain_chunk(
                session, after_seq=walk.seq, upto_seq=head_seq, limit=chunk
            )
            stored_rules = (
                repository.rules_between(session, rows[0]["seq"], rows[-1]["seq"]) if rows else {}
            )
        if not rows:
            break
        for row in rows:
            problem = walk.check(row, stored_rules.get(row["seq"], set()))
            if problem is not None:
                return ChainReport(walk.count, walk.hash, problem)
    problem = _check_head(walk, head_seq, head_hash)
    if problem is None:
        with transaction(sessions) as session:
            beyond = repository.first_past_head(session)
        if beyond is not None:
            problem = ChainProblem(
                beyond[0], beyond[1], "it lies beyond the audit head (not appended by supportgate)"
            )
    return ChainReport(walk.count, walk.hash, problem)


class _Walk:
    """The chain so far: the last seq and hash seen and how many decisions were checked."""

    def __init__(self) -> None:
        self.seq = 0
        self.id: str | None = None
        self.hash = AUDIT_GENESIS_HASH
        self.count = 0

    def check(
        self, row: Mapping[Any, Any], stored_rules: set[tuple[str, str]]
    ) -> ChainProblem | None:
        seq, decision_id = int(row["seq"]), str(row["id"])
        wrong = _wrongs(row, self.seq, self.hash, stored_rules)
        if wrong:
            return ChainProblem(seq, decision_id, "; ".join(wrong))
        self.seq, self.id, self.hash = seq, decision_id, str(row["hash"])
        self.count += 1
        return None


def _wrongs(
    row: Mapping[Any, Any], prev_seq: int, prev_hash: str, stored_rules: set[tuple[str, str]]
) -> list[str]:
    seq = int(row["seq"])
    wrong: list[str] = []
    if seq != prev_seq + 1:
        missing = f"seq {prev_seq + 1}" if seq == prev_seq + 2 else f"seqs {prev_seq + 1}-{seq - 1}"
        wrong.append(f"{missing} missing before it (deleted)")
    if row["prev_hash"] != prev_hash:
        before = f"seq {prev_seq}" if prev_seq else "the genesis hash"
        wrong.append(f"prev_hash {row['prev_hash']} is not the hash of {before} ({prev_hash})")
    if _fields(row).hash() != row["hash"]:
        wrong.append("its hash does not match its contents (edited after it was recorded)")
    if not input_matches_digest(row["policy_input"], row["input_digest"]):
        wrong.append("its stored policy input does not match its input_digest")
    if stored_rules != rule_pairs(row["document"]):
        wrong.append("its decision_rules rows do not match its violations")
    return wrong


def _check_head(walk: _Walk, head_seq: int, head_hash: str) -> ChainProblem | None:
    if walk.seq != head_seq:
        return ChainProblem(
            head_seq,
            None,
            f"the audit head names seq {head_seq}, but the chain ends at seq {walk.seq} "
            "(the last decisions were deleted)",
        )
    if walk.hash != head_hash:
        return ChainProblem(
            head_seq,
            walk.id,
            f"the audit head's hash {head_hash} is not the last decision's hash {walk.hash}",
        )
    return None


def _fields(row: Mapping[Any, Any]) -> ChainedFields:
    return ChainedFields(
        seq=int(row["seq"]),
        id=row["id"],
        kind=row["kind"],
        name=row["name"],
        verdict=row["verdict"],
        allowed=row["allowed"],
        cause=row["cause"],
        matrix_version=row["matrix_version"],
        policy_revision=row["policy_revision"],
        input_digest=row["input_digest"],
        evaluated_at=row["evaluated_at"],
        document=row["document"],
        prev_hash=row["prev_hash"],
    )
