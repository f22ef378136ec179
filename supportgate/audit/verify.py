"""`supportgate audit verify`: rebuild the log's tree from the database and check every entry
and every row derived from one; name the first that is off.

The entries are read in leaf order, CHUNK per short transaction, and hashed into a tree of
their own (in memory: the stored nodes are not trusted, they are what an editor recomputes).
Each leaf must follow the one before it (a gap is a deleted entry), and each decision entry
must have its decision row saying exactly what the entry says, with a stored policy input
that has the entry's `input_digest` and the `decision_rules` rows of its violations. Last, the
rebuilt root must be the head's at the head's size, and no entry or decision may lie beyond
the head.

The head is read first and the walk stops at its size, so entries appended while the walk
runs are left for the next run instead of being mistaken for tampering.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
from sqlalchemy import select
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import LedgerEntry, transaction
from supportgate.ledger.entries import decision_document
from supportgate.ledger.log import read_head
from supportgate.ledger.merkle import MerkleTree
from supportgate.ledger.nodestore import MemoryNodeStore
from supportgate.policy.inputs import canonical_digest, format_time

from . import repository
from .rows import decision_from_columns, rule_pairs

CHUNK = 1000


@dataclass(frozen=True, slots=True)
class LogProblem:
    """The first leaf (or the head) that does not fit, and what is wrong with it."""

    leaf_index: int | None
    what: str

    def describe(self) -> str:
        where = "the head" if self.leaf_index is None else f"leaf {self.leaf_index}"
        return f"audit log broken at {where}: {self.what}"


@dataclass(frozen=True, slots=True)
class LogReport:
    entries: int
    root: bytes
    problem: LogProblem | None

    @property
    def intact(self) -> bool:
        return self.problem is None

    def summary(self) -> str:
        if self.problem is not None:
            return self.problem.describe()
        root = base64.b64encode(self.root).decode()
        return f"audit log intact: {self.entries} entries, root {root}"


def verify_log(sessions: sessionmaker[Session], *, chunk: int = CHUNK) -> LogReport:
    with transaction(sessions) as session:
        head = read_head(session)
    tree = MerkleTree(MemoryNodeStore())
    while tree.size < head.size:
        first = tree.size
        with transaction(sessions) as session:
            entries = _entries(session, first, min(head.size, first + chunk) - 1)
            decisions = repository.decisions_at_leaves(session, first, first + len(entries) - 1)
            seqs = [int(row["seq"]) for row in decisions.values()]
            rules = repository.rules_between(session, min(seqs), max(seqs)) if seqs else {}
        if not entries:
            break
        for entry in entries:
            problem = _check_entry(entry, tree.size, decisions, rules)
            if problem is not None:
                return LogReport(tree.size, tree.root(), problem)
            tree.append([entry.entry.encode()])
    problem = _check_head(tree, head.size, head.root)
    if problem is None:
        with transaction(sessions) as session:
            problem = _beyond_head(session, head.size)
    return LogReport(tree.size, tree.root(), problem)


_ledger_entries = LedgerEntry.__table__  # type: ignore[attr-defined]


def _entries(session: Session, first: int, last: int) -> list[LedgerEntry]:
    statement = (
        select(LedgerEntry)
        .where(_ledger_entries.c.leaf_index.between(first, last))
        .order_by(_ledger_entries.c.leaf_index)
    )
    return list(session.execute(statement).scalars())


def _check_entry(
    entry: LedgerEntry,
    expected_index: int,
    decisions: Mapping[int, Any],
    rules: Mapping[int, set[tuple[str, str]]],
) -> LogProblem | None:
    if entry.leaf_index != expected_index:
        return LogProblem(
            expected_index, f"it is missing (the next stored entry is leaf {entry.leaf_index})"
        )
    document, wrong = _read_entry(entry)
    if wrong is None and entry.type == "decision":
        row = decisions.get(entry.leaf_index)
        if row is None:
            wrong = "its decision row is missing"
        else:
            wrongs = _decision_wrongs(document, row, rules.get(int(row["seq"]), set()))
            wrong = f"decision {row['id']}: " + "; ".join(wrongs) if wrongs else None
    return None if wrong is None else LogProblem(entry.leaf_index, wrong)


def _read_entry(entry: LedgerEntry) -> tuple[dict[str, Any], str | None]:
    """The entry's document, and what is wrong with it on its own (None: nothing)."""
    try:
        document = msgspec.json.decode(entry.entry)
    except msgspec.DecodeError:
        return {}, "its entry is not JSON"
    if not isinstance(document, dict) or document.get("type") != entry.type:
        return {}, f"its entry does not say it is a {entry.type!r}"
    if document.get("recorded_at") != format_time(entry.recorded_at):
        return document, "its recorded_at differs from its entry's"
    return document, None


def _decision_wrongs(
    document: Mapping[str, Any], row: Mapping[str, Any], stored_rules: set[tuple[str, str]]
) -> list[str]:
    wrong: list[str] = []
    try:
        says = decision_document(decision_from_columns(row))
    except (msgspec.ValidationError, KeyError, TypeError):
        return ["its row is not a decision document"]
    if says != document.get("decision"):
        wrong.append("its row differs from its entry (edited after it was recorded)")
    if format_time(row["recorded_at"]) != document.get("recorded_at"):
        wrong.append("its recorded_at differs from its entry's")
    if canonical_digest(row["policy_input"].encode()) != row["input_digest"]:
        wrong.append("its stored policy input does not match its input_digest")
    if stored_rules != rule_pairs(row["document"]):
        wrong.append("its decision_rules rows do not match its violations")
    return wrong


def _check_head(tree: MerkleTree, head_size: int, head_root: bytes) -> LogProblem | None:
    if tree.size != head_size:
        return LogProblem(
            tree.size,
            f"the head names {head_size} entries, but the log ends at {tree.size} "
            "(the last entries were deleted)",
        )
    if tree.root() != head_root:
        return LogProblem(None, "the head's root is not the root of the stored entries")
    return None


def _beyond_head(session: Session, size: int) -> LogProblem | None:
    column = _ledger_entries.c.leaf_index
    entry = session.execute(
        select(column).where(column >= size).order_by(column).limit(1)
    ).scalar_one_or_none()
    if entry is not None:
        return LogProblem(entry, "it lies beyond the head (not appended by supportgate)")
    decision = repository.decisions_outside(session, size)
    if decision is not None:
        return LogProblem(
            int(decision["leaf_index"]),
            f"decision {decision['id']} names a leaf beyond the head (not appended by supportgate)",
        )
    return None
