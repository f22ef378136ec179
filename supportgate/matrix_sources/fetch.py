"""What reading a source gives: new content at a revision, or nothing new since the revision
known; a source that cannot be read raises SourceUnreachable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from supportgate.errors import SupportgateError
from supportgate.manifests import Format

MAX_BYTES = 1024 * 1024
"""The largest matrix document read from any source (the API takes no larger body)."""


class SourceUnreachable(SupportgateError):
    pass


class NoDocument(SupportgateError):
    """The source was read, but holds no matrix document at `revision` (a git commit without
    the file): as content that does not validate, it is not published."""

    def __init__(self, message: str, *, revision: str) -> None:
        super().__init__(message)
        self.revision = revision


@dataclass(frozen=True, slots=True)
class Fetched:
    revision: str
    """The commit read, or the ETag (`sha256:<hex>` of the body when the server sent none)."""
    content: bytes
    fmt: Format


@dataclass(frozen=True, slots=True)
class Unchanged:
    revision: str


class Reader(Protocol):
    def read(self, known: str | None) -> Fetched | Unchanged: ...
