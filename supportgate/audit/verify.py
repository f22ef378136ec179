"""`supportgate audit verify`: rebuild the log's tree from the database, hold it to the signed
checkpoints and every row derived from it; name the first thing off (docs/audit-verify.md).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import msgspec
from sqlalchemy import Row
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.config import CHECKPOINT_INTERVAL_SECONDS
from supportgate.db import transaction
from supportgate.ledger.log import Head, entries_between, read_head
from supportgate.ledger.tracking import Span
from supportgate.policy.inputs import format_time
from supportgate.tlog import MerkleTree, NodeId, NoteVerifier

from . import entry_rows, log_rows, repository
from .checkpoints import HeldCheckpoint, Note, fork, open_notes, stored_notes
from .tracking_state import TrackingFromLog, UnusableInput, differences, span_wrongs, spans_stored

CHUNK = 2000
SIGNING_INTERVAL = timedelta(seconds=CHECKPOINT_INTERVAL_SECONDS)
"""The longest the service waits, while entries arrive, before it signs the head (the
default and the most SUPPORTGATE_CHECKPOINT_INTERVAL may be)."""
UNSIGNED_GRACE = 2 * SIGNING_INTERVAL
"""How long a leaf may go without a checkpoint covering it, and how far in the future its
recorded_at may lie (clocks of replicas differ a little)."""


@dataclass(frozen=True, slots=True)
class LogProblem:
    what: str
    at: str | None = None
    leaf_index: int | None = None

    @classmethod
    def at_leaf(cls, leaf_index: int, what: str) -> LogProblem:
        return cls(what, f"leaf {leaf_index}", leaf_index)

    def describe(self) -> str:
        where = f" at {self.at}" if self.at else ""
        return f"audit log broken{where}: {self.what}"


@dataclass(frozen=True, slots=True)
class LogReport:
    entries: int
    """Leaves rebuilt (up to the first problem)."""
    root: bytes
    problem: LogProblem | None
    checkpoints: int = 0
    """Checkpoints that agree with the rebuilt tree."""
    covered: int = 0
    """Leaves the largest of them covers."""
    signed_by: str | None = None
    """The verifier key their signatures were checked with; None: not checked."""
    grace: timedelta = UNSIGNED_GRACE

    @property
    def intact(self) -> bool:
        return self.problem is None and not self.unverified

    @property
    def unverified(self) -> bool:
        return self.problem is None and self.checkpoints > 0 and self.signed_by is None

    def summary(self) -> str:
        if self.problem is not None:
            return self.problem.describe()
        log = f"{self.entries} entries, root {base64.b64encode(self.root).decode()}"
        if self.unverified:
            return (
                f"audit log not verified: {log}; {self._checkpoints()}, but their signatures "
                "were not checked: no verifier key (pass --verifier-key, or set "
                "SUPPORTGATE_SIGNING_KEY_FILE to the service's key)"
            )
        return f"audit log intact: {log}; {self._checkpoints()}"

    def _checkpoints(self) -> str:
        unsigned = self.entries - self.covered
        tail = (
            f"; the last {unsigned} were recorded in the last {_seconds(self.grace)} and "
            "are not signed yet"
            if unsigned
            else ""
        )
        if not self.checkpoints:
            return "no checkpoint" + tail
        agree = (
            "1 checkpoint agrees"
            if self.checkpoints == 1
            else f"{self.checkpoints} checkpoints agree"
        )
        signed = f" (signed by {self.signed_by})" if self.signed_by else ""
        return f"{agree}{signed}, the largest of size {self.covered}{tail}"


def verify_log(
    sessions: sessionmaker[Session],
    *,
    notes: Sequence[Note] | None = None,
    verifier: NoteVerifier | None = None,
    clock: Clock = SYSTEM_CLOCK,
    grace: timedelta = UNSIGNED_GRACE,
    chunk: int = CHUNK,
) -> LogReport:
    """`notes`: a witness file's (None: the stored ones); `verifier` None: their signatures
    are not checked."""
    with transaction(sessions) as session:
        if notes is None:
            notes = stored_notes(session)
        head = read_head(session)
    held, unreadable = open_notes(notes, verifier)
    signer = None if verifier is None else f"{verifier.name}+{verifier.key_hash:08x}"
    walk = _Walk(held, clock.now(), grace)
    if unreadable:
        bad = unreadable[0]
        return walk.report(LogProblem(f"it is not a checkpoint of this log: {bad.why}", bad.source))
    forked = fork(held)
    if forked is not None:
        one, other = forked
        return walk.report(
            LogProblem(
                f"a fork: {other.describe()} is signed for the same size with another root, so "
                "the log's key signed two different histories (each reader may have been shown "
                "its own); at most one of them is this database's",
                one.describe(),
            )
        )
    while walk.size < head.size:
        first = walk.size
        last = min(head.size, first + chunk) - 1
        with transaction(sessions) as session:
            rows = _ChunkRows.read(session, first, last)
        problem = walk.check(rows)
        if problem is None:
            with transaction(sessions) as session:
                problem = walk.check_spans(session)
        if problem is not None:
            return walk.report(problem, signer)
        if len(rows.entries) < last - first + 1:
            break  # the last entries are gone: the head check names the first
    problem = walk.finish(head)
    if problem is None:
        with _snapshot(sessions) as session:
            problem = walk.check_rows(session)
    return walk.report(problem, signer)


@dataclass(frozen=True, slots=True)
class _ChunkRows:
    entries: Sequence[Row[Any]]
    nodes: Mapping[tuple[int, int], bytes]
    named: Mapping[str, Mapping[int, Any]]
    """By entry type, the rows naming each leaf."""
    rules: Mapping[int, set[tuple[str, str]]]

    @classmethod
    def read(cls, session: Session, first: int, last: int) -> _ChunkRows:
        named = log_rows.rows_at(session, first, last)
        seqs = [int(row["seq"]) for row in named["decision"].values()]
        return cls(
            entries=entries_between(session, first, last),
            nodes=log_rows.nodes_completed(session, first, last),
            named=named,
            rules=repository.rules_between(session, min(seqs), max(seqs)) if seqs else {},
        )


_LEAVES = {leaf.entry_type: leaf for leaf in log_rows.LEAF_COLUMNS}
_ROW_CHECKS = {
    "matrix": entry_rows.matrix_wrongs,
    "waiver-created": entry_rows.waiver_created_wrongs,
    "waiver-deleted": entry_rows.waiver_deleted_wrongs,
}


class _RecomputedNodes:
    """The node store of the rebuilt tree: it keeps nothing (the tree's frontier is all the
    walk needs) and compares every node the tree completes with the stored one."""

    def __init__(self) -> None:
        self.stored: Mapping[tuple[int, int], bytes] = {}
        self.wrong_leaves: dict[int, str] = {}
        """Leaf index -> what is wrong with its stored hash."""
        self.wrong_node: tuple[NodeId, str] | None = None

    def get(self, ids: Sequence[NodeId]) -> list[bytes]:
        if ids:  # a tree opened at size 0 reads nothing, and its current root none
            raise AssertionError("the walk asks the tree for nothing but its current root")
        return []

    def put(self, nodes: Sequence[tuple[NodeId, bytes]]) -> None:
        for node, digest in nodes:
            stored = self.stored.get((node.level, node.index))
            if stored == digest:
                continue
            if node.level == 0:
                self.wrong_leaves[node.index] = (
                    "no leaf hash is stored for it (the stored tree was edited)"
                    if stored is None
                    else "its stored leaf hash is not the hash of its entry (the entry was "
                    "edited after it was appended)"
                )
            elif self.wrong_node is None and stored is None:
                self.wrong_node = (node, "it is missing")
            elif self.wrong_node is None:
                first, last = node.index << node.level, ((node.index + 1) << node.level) - 1
                self.wrong_node = (node, f"it is not the hash of leaves {first} to {last}")


@dataclass
class _Walk:
    checkpoints: list[HeldCheckpoint]
    now: datetime
    grace: timedelta
    nodes: _RecomputedNodes = field(default_factory=_RecomputedNodes)
    tree: MerkleTree = field(init=False)
    tracking: TrackingFromLog = field(default_factory=TrackingFromLog)
    counted: dict[str, int] = field(default_factory=dict)
    """Entries walked, by type (each matched to its one row)."""
    agreed: HeldCheckpoint | None = None
    """The largest checkpoint that agrees so far."""

    def __post_init__(self) -> None:
        self.tree = MerkleTree(self.nodes)
        self.covered = max((held.size for held in self.checkpoints), default=0)
        self._pending = list(reversed(self.checkpoints))  # the next one to check last

    @property
    def size(self) -> int:
        return self.tree.size

    def check(self, rows: _ChunkRows) -> LogProblem | None:
        """Walk one chunk, in pieces that end at checkpoint sizes."""
        entries = rows.entries
        start = self.size
        gap = next((n for n, entry in enumerate(entries) if entry.leaf_index != start + n), None)
        self.nodes.stored = rows.nodes
        present = entries if gap is None else entries[:gap]
        offset = 0
        while offset < len(present):
            end = len(present)
            if self._pending and self._pending[-1].size - start < end:
                end = max(offset, self._pending[-1].size - start)
            problem = self._piece(present[offset:end], rows) or self._at_checkpoint()
            if problem is not None:
                return problem
            offset = end
        if gap is not None:
            return LogProblem.at_leaf(
                start + gap,
                f"it is missing (the next stored entry is leaf {entries[gap].leaf_index})",
            )
        return self._at_checkpoint()

    def _piece(self, entries: Sequence[Row[Any]], rows: _ChunkRows) -> LogProblem | None:
        self.tree.append(entry.entry.encode() for entry in entries)
        for entry in entries:
            wrong = self._entry_wrongs(entry, rows)
            if wrong:
                return LogProblem.at_leaf(entry.leaf_index, "; ".join(wrong))
        if self.nodes.wrong_node is not None:
            node, what = self.nodes.wrong_node
            return LogProblem(
                f"{what} (the stored tree was edited: proofs served from it would not verify)",
                f"the stored tree {node}",
            )
        return None

    def _at_checkpoint(self) -> LogProblem | None:
        while self._pending and self._pending[-1].size == self.size:
            held = self._pending.pop()
            if held.checkpoint.root_hash != self.tree.root():
                root = base64.b64encode(self.tree.root()).decode()
                return LogProblem(
                    f"the log's root at size {held.size} is {root}: {self._bound()}",
                    held.describe(),
                )
            self.agreed = held
        return None

    def _bound(self) -> str:
        if self.agreed is None:
            return "an entry at or after leaf 0 was changed, added or deleted since it was signed"
        return (
            f"an entry at or after leaf {self.agreed.size} was changed, added or deleted since "
            f"it was signed ({self.agreed.describe()} still agrees)"
        )

    def _entry_wrongs(self, entry: Row[Any], rows: _ChunkRows) -> list[str]:
        leaf = int(entry.leaf_index)
        document, wrong = _read_entry(entry)
        if not wrong and leaf in self.nodes.wrong_leaves:
            wrong = [self.nodes.wrong_leaves[leaf]]
        return (
            wrong
            or self._row_wrongs(leaf, entry, document, rows)
            or self._time_wrongs(leaf, entry.recorded_at)
            or self._follow(leaf, entry.type, document)
        )

    def _follow(self, leaf: int, entry_type: str, document: dict[str, Any]) -> list[str]:
        try:
            self.tracking.add(leaf, document)
        except (KeyError, TypeError, ValueError, AttributeError):
            return [f"its entry is not a well-formed {entry_type!r} entry"]
        self.counted[entry_type] = self.counted.get(entry_type, 0) + 1
        return []

    def _row_wrongs(
        self, leaf: int, entry: Row[Any], document: dict[str, Any], rows: _ChunkRows
    ) -> list[str]:
        claims = {kind: named[leaf] for kind, named in rows.named.items() if leaf in named}
        row = claims.pop(entry.type, None)
        if claims:
            other, claimed = next(iter(claims.items()))
            label, key = _LEAVES[other].label, _LEAVES[other].name.key
            return [f"{label} {claimed[key]} names it, but it is a {entry.type!r} entry"]
        if entry.type == "untracked":
            return []
        label, key = _LEAVES[entry.type].label, _LEAVES[entry.type].name.key
        if row is None:
            return [f"its {label} row is missing"]
        if entry.type == "decision":
            rules = rows.rules.get(int(row["seq"]), set())
            wrong = entry_rows.decision_wrongs(document, row, rules)
        else:
            wrong = _ROW_CHECKS[entry.type](entry.entry.encode(), row)
        return [f"{label} {row[key]}: " + "; ".join(wrong)] if wrong else []

    def _time_wrongs(self, leaf: int, recorded_at: datetime) -> list[str]:
        if recorded_at > self.now + self.grace:
            return [f"it was recorded at {format_time(recorded_at)}, in the future"]
        if leaf >= self.covered and recorded_at < self.now - self.grace:
            return [
                f"no checkpoint covers it, though it was recorded at {format_time(recorded_at)}, "
                f"more than {_seconds(self.grace)} ago (the service signs at least every "
                f"{_seconds(SIGNING_INTERVAL)}): appended behind the service's back, or the "
                "service stopped before it signed (starting it signs)"
            ]
        return []

    def finish(self, head: Head) -> LogProblem | None:
        if self.size != head.size:
            return LogProblem.at_leaf(
                self.size,
                f"the head names {head.size} entries, but the log ends at {self.size} "
                "(the last entries were deleted)",
            )
        problem = self._at_checkpoint()  # an empty log's checkpoints of size 0
        if problem is not None:
            return problem
        if self._pending:
            larger = self._pending[-1]
            return LogProblem(
                f"it is larger than the log ({self.size} entries): {self._bound()}",
                larger.describe(),
            )
        if self.tree.root() != head.root:
            return LogProblem("the head's root is not the root of the stored entries", "the head")
        return None

    def check_rows(self, session: Session) -> LogProblem | None:
        """In one snapshot: nothing past the head, no row without its entry, and the
        tracked-manifest table as the log leads to (with the entries appended meanwhile)."""
        now_head = read_head(session)
        past = log_rows.beyond(session, now_head.size)
        if past is not None:
            return LogProblem.at_leaf(*past)
        unanchored = log_rows.unanchored_row(session, self.size, self.counted)
        if unanchored is not None:
            return LogProblem(unanchored)
        return self._check_tracking(session, now_head)

    def _check_tracking(self, session: Session, now_head: Head) -> LogProblem | None:
        for entry in entries_between(session, self.size, now_head.size - 1):
            try:  # appended since the walk: checked by the next run, here only followed
                self.tracking.add(int(entry.leaf_index), msgspec.json.decode(entry.entry))
            except (msgspec.DecodeError, KeyError, TypeError, ValueError, AttributeError):
                return LogProblem.at_leaf(int(entry.leaf_index), "its entry is not well-formed")
        try:
            expected = self.tracking.expected_rows(session)
        except UnusableInput as exc:
            return LogProblem.at_leaf(exc.leaf_index, exc.reason)
        found = differences(session, expected)
        if found:
            return LogProblem(found[0].describe())
        problem = self.check_spans(session, [*self.tracking.open.values()])
        stored = spans_stored(session)
        if problem is None and stored != self.tracking.spans:
            return LogProblem(
                f"the tracked-manifest history holds {stored} spans, but the log's "
                f"{self.tracking.spans} decisions open {self.tracking.spans}"
            )
        return problem

    def check_spans(self, session: Session, also: Sequence[Span] = ()) -> LogProblem | None:
        """The spans the entries followed so far ended (and `also`) as the log says."""
        wrong = span_wrongs(session, [*self.tracking.drain(), *also])
        if not wrong:
            return None
        span, what = min(wrong, key=lambda found: found[0].leaf_index)
        return LogProblem(
            f"the tracked-manifest history disagrees with the log at {span.kind}/{span.name}, "
            f"the span its decision at leaf {span.leaf_index} opened: {what}"
        )

    def report(self, problem: LogProblem | None, signed_by: str | None = None) -> LogReport:
        agreed = (
            0
            if self.agreed is None
            else len([held for held in self.checkpoints if held.size <= self.agreed.size])
        )
        return LogReport(
            entries=self.size,
            root=self.tree.root(),
            problem=problem,
            checkpoints=agreed,
            covered=self.agreed.size if self.agreed else 0,
            signed_by=signed_by,
            grace=self.grace,
        )


def _read_entry(entry: Row[Any]) -> tuple[dict[str, Any], list[str]]:
    """An entry's document, and what is wrong with it on its own."""
    try:
        document = msgspec.json.decode(entry.entry)
    except msgspec.DecodeError:
        return {}, ["its entry is not JSON"]
    if not isinstance(document, dict) or document.get("type") != entry.type:
        return {}, [f"its entry does not say it is a {entry.type!r}"]
    if document.get("recorded_at") != format_time(entry.recorded_at):
        return document, ["its recorded_at differs from its entry's"]
    return document, []


@contextmanager
def _snapshot(sessions: sessionmaker[Session]) -> Iterator[Session]:
    """A read transaction that sees one state of the database throughout: SQLite's read
    transactions do; PostgreSQL's need REPEATABLE READ (each statement of the default READ
    COMMITTED sees the latest commits)."""
    with sessions() as session, session.begin():
        if session.get_bind().dialect.name == "postgresql":
            session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
        yield session


def _seconds(interval: timedelta) -> str:
    return f"{interval.total_seconds():g} s"
