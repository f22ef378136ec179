"""The checkpoints `audit verify` holds the log to: a witness file's, or the stored ones.
Without a verifier key only their bodies are read, and the report says their signatures were
not checked: anyone who can write the database can write an unsigned checkpoint."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlmodel import Session

from supportgate.db import LedgerCheckpoint, table_of
from supportgate.errors import UsageError
from supportgate.tlog import (
    Checkpoint,
    InvalidNote,
    NoteVerifier,
    open_checkpoint,
    unverified_checkpoint,
)

_checkpoints = table_of(LedgerCheckpoint)


@dataclass(frozen=True, slots=True)
class Note:
    """A signed note as found, and where: `checkpoint 2 of witness.txt`, `the stored
    checkpoint of size 10`."""

    source: str
    text: str
    stored_size: int | None = None
    """The `tree_size` column of a stored checkpoint, which must be its note's size."""


@dataclass(frozen=True, slots=True)
class HeldCheckpoint:
    """A checkpoint read from a note: the tree size and root the log must still have."""

    checkpoint: Checkpoint
    source: str

    @property
    def size(self) -> int:
        return self.checkpoint.tree_size

    def describe(self) -> str:
        root = base64.b64encode(self.checkpoint.root_hash).decode()
        return f"the checkpoint of size {self.size} (root {root}; {self.source})"


@dataclass(frozen=True, slots=True)
class UnreadableCheckpoint:
    source: str
    why: str


def witness_notes(path: Path) -> list[Note]:
    """The notes of a witness file, in file order; UsageError naming the file when it
    cannot be read or a note has no signatures."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}", field="--checkpoints") from exc
    # A note's body never holds a blank line, so the blank lines split the file into
    # body, signatures, body, signatures, ...
    blocks = text.strip("\n").split("\n\n") if text.strip("\n") else []
    if len(blocks) % 2:
        raise UsageError(
            f"{path}: note {len(blocks) // 2 + 1} has no signature lines after its body (a "
            "witness file is signed notes separated by blank lines)",
            field="--checkpoints",
        )
    return [
        Note(f"checkpoint {n + 1} of {path}", f"{blocks[2 * n]}\n\n{blocks[2 * n + 1]}\n")
        for n in range(len(blocks) // 2)
    ]


def stored_notes(session: Session) -> list[Note]:
    rows = session.execute(
        select(_checkpoints.c.tree_size, _checkpoints.c.note).order_by(_checkpoints.c.tree_size)
    )
    return [
        Note(f"the stored checkpoint of size {size}", note, stored_size=int(size))
        for size, note in rows
    ]


def open_notes(
    notes: Sequence[Note], verifier: NoteVerifier | None
) -> tuple[list[HeldCheckpoint], list[UnreadableCheckpoint]]:
    held, unreadable = [], []
    for note in notes:
        try:
            if verifier is None:
                checkpoint = unverified_checkpoint(note.text)
            else:
                checkpoint = open_checkpoint(note.text, verifier)
        except InvalidNote as exc:
            unreadable.append(UnreadableCheckpoint(note.source, str(exc)))
            continue
        if note.stored_size is not None and note.stored_size != checkpoint.tree_size:
            unreadable.append(
                UnreadableCheckpoint(
                    note.source,
                    f"its note is signed for tree size {checkpoint.tree_size} (the row was edited)",
                )
            )
            continue
        held.append(HeldCheckpoint(checkpoint, note.source))
    held.sort(key=lambda found: found.size)
    return held, unreadable


def fork(held: Sequence[HeldCheckpoint]) -> tuple[HeldCheckpoint, HeldCheckpoint] | None:
    """The first two checkpoints of one size with different roots: a log has one tree of
    each size, so its key signed two histories (a split view), whatever the database says."""
    first_of_size: dict[int, HeldCheckpoint] = {}
    for found in held:
        first = first_of_size.setdefault(found.size, found)
        if first.checkpoint.root_hash != found.checkpoint.root_hash:
            return first, found
    return None
