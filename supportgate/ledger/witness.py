"""The witness file (SUPPORTGATE_CHECKPOINT_WITNESS): every signed checkpoint, appended.

It is a copy of the checkpoints that whoever owns the database cannot rewrite alone (kept on
another disk, another machine's mount, a write-once store), so that `supportgate audit
verify --checkpoints FILE` can hold today's database to what was signed before.

The file is the notes one after another, each followed by a blank line:

    <origin>\\n<size>\\n<root>\\n\\n— <name> <signature>\\n\\n<origin>\\n...

A checkpoint's body has no blank line, so the blank lines alternate: one ends a body, the
next ends the note (`audit/checkpoints.py` reads them back for `supportgate audit verify
--checkpoints`). Each append is flushed and fsynced before the writer goes on.
"""

from __future__ import annotations

import os
from pathlib import Path


def append_note(path: Path, note: str) -> None:
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
