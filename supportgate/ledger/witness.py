"""The witness file (SUPPORTGATE_CHECKPOINT_WITNESS): every signed checkpoint appended, a copy
that whoever owns the database cannot rewrite alone, so that `supportgate audit verify
--checkpoints FILE` can hold today's database to what was signed before. The notes follow one
another, each followed by a blank line (audit/checkpoints.py reads them back)."""

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
