"""C2SP tlog-checkpoints (c2sp.org/tlog-checkpoint): the signed state of the log, a body of
three lines (`<origin>\n<tree size>\n<base64 root hash>\n`) signed as a note (note.py) by the
key named as the origin. This log writes no extension lines, so a body with any is refused.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

from .errors import InvalidNote
from .nodestore import HASH_SIZE
from .note import NoteSigner, NoteVerifier, check_name, decode_base64, open_note

_LINES = ("origin", "tree_size", "root_hash")
_TREE_SIZE = re.compile(r"0|[1-9][0-9]*", re.ASCII)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    origin: str
    tree_size: int
    root_hash: bytes

    def body(self) -> str:
        root = base64.b64encode(self.root_hash).decode()
        return f"{self.origin}\n{self.tree_size}\n{root}\n"

    @classmethod
    def parse(cls, body: str) -> Checkpoint:
        lines = body.split("\n")
        if len(lines) != len(_LINES) + 1 or lines[-1] != "":
            raise InvalidNote(
                "a checkpoint is three lines, each ending in a newline: origin, tree size, "
                "root hash",
                field="checkpoint",
            )
        origin, size, root = lines[:3]
        check_name(origin, field="origin", error=InvalidNote)
        if not _TREE_SIZE.fullmatch(size):
            raise InvalidNote(
                "a tree size is decimal digits without leading zeros", field="tree_size"
            )
        root_hash = decode_base64(root, field="root_hash", error=InvalidNote)
        if len(root_hash) != HASH_SIZE:
            raise InvalidNote(
                f"a root hash has {HASH_SIZE} bytes, not {len(root_hash)}", field="root_hash"
            )
        return cls(origin, int(size), root_hash)


def sign_checkpoint(checkpoint: Checkpoint, signer: NoteSigner) -> str:
    """The key's name must be the origin (the spec's SHOULD, made a rule here so that a
    verifier key says which log it is for)."""
    if checkpoint.origin != signer.name:
        raise InvalidNote(
            f"the signer key is named {signer.name!r}, the log's origin is {checkpoint.origin!r}",
            field="origin",
        )
    return signer.sign(checkpoint.body())


def open_checkpoint(note: bytes | str, verifier: NoteVerifier) -> Checkpoint:
    checkpoint = Checkpoint.parse(open_note(note, verifier))
    if checkpoint.origin != verifier.name:
        raise InvalidNote(
            f"the checkpoint's origin is {checkpoint.origin!r}, the key is for {verifier.name!r}",
            field="origin",
        )
    return checkpoint


def unverified_checkpoint(note: str) -> Checkpoint:
    """The checkpoint in `note`, its signatures unchecked: for a note this process signed, or
    to compare roots when no verifier key is at hand. InvalidNote when it holds none."""
    text, blank, _signatures = note.rpartition("\n\n")
    if not blank:
        raise InvalidNote("no blank line before the signatures", field="note")
    return Checkpoint.parse(text + "\n")
