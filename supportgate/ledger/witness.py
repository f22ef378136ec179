"""The witness file (SUPPORTGATE_CHECKPOINT_WITNESS): every signed checkpoint, appended.

It is a copy of the checkpoints that whoever owns the database cannot rewrite alone (kept on
another disk, another machine's mount, a write-once store), so that `supportgate audit
verify --checkpoints FILE` can hold today's database to what was signed before.

The file is the notes one after another, each followed by a blank line:

    <origin>\\n<size>\\n<root>\\n\\n— <name> <signature>\\n\\n<origin>\\n...

A checkpoint's body has no blank line, so the blank lines alternate: one ends a body, the
next ends the note. Each append is flushed and fsynced before the writer goes on.
"""

from __future__ import annotations

import os
from pathlib import Path

from supportgate.errors import InvalidNote


def append_note(path: Path, note: str) -> None:
    """Append one signed note (ending in a newline) and a blank line; flush and fsync."""
    created = not path.exists()
    with path.open("a", encoding="utf-8") as file:
        file.write(note + "\n")
        file.flush()
        os.fsync(file.fileno())
    if created:  # the new file's directory entry, too
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def read_notes(text: str) -> list[str]:
    """The signed notes of a witness file's text, in order; InvalidNote (field `witness`)
    when it does not split into whole notes."""
    if not text:
        return []
    blocks = text.split("\n\n")  # body, signatures, body, signatures, ..., ""
    if blocks[-1] != "" or len(blocks) % 2 != 1:
        raise InvalidNote(
            "a witness file is whole signed notes, each followed by a blank line", field="witness"
        )
    bodies, signatures = blocks[0:-1:2], blocks[1:-1:2]
    return [f"{body}\n\n{lines}\n" for body, lines in zip(bodies, signatures, strict=True)]
