"""SUPPORTGATE_MATRIX_SOURCE: where the support matrix is kept, as the operator writes it.

    git+<url or path>#<ref>:<file>   a git repository (any URL git fetches: a local path,
                                     file://, https://, ssh://, host:path), a branch or tag,
                                     and the matrix file's path in it
    https://host/path/matrix.yaml    a document served over https (`.json`: JSON; else YAML)

A bad value is a UsageError naming the variable, so the service refuses to start with it.
`shown(...)` is the form kept in the database and shown by the API: without the user name,
password or token a URL may carry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlsplit, urlunsplit

from supportgate.errors import UsageError

FIELD = "SUPPORTGATE_MATRIX_SOURCE"
_REF = re.compile(r"^(?!-)(?!.*\.\.)(?!.*//)[A-Za-z0-9._/+-]+(?<![./])$")
"""Branch and tag names (or full `refs/...` names) as git accepts them, in a narrower
alphabet; never an option (`-...`)."""


@dataclass(frozen=True, slots=True)
class GitSource:
    url: str
    ref: str
    file: str

    @property
    def shown(self) -> str:
        return f"git+{_without_credentials(self.url)}#{self.ref}:{self.file}"


@dataclass(frozen=True, slots=True)
class HttpsSource:
    url: str

    @property
    def shown(self) -> str:
        return _without_credentials(self.url)


Source = GitSource | HttpsSource


def parse_source(text: str) -> Source:
    """The source `text` names (a UsageError naming SUPPORTGATE_MATRIX_SOURCE otherwise)."""
    if text.startswith("git+"):
        return _git(text.removeprefix("git+"))
    if text.lower().startswith("https://"):
        parts = urlsplit(text)
        if not parts.hostname:
            raise UsageError(f"{text!r} names no host", field=FIELD)
        return HttpsSource(text)
    raise UsageError(
        f"{text!r} is neither git+<url or path>#<ref>:<file> nor an https:// URL", field=FIELD
    )


def _git(rest: str) -> GitSource:
    url, hash_sign, target = rest.rpartition("#")
    ref, colon, file = target.partition(":")
    if not hash_sign or not colon or not url:
        raise UsageError(
            "a git source is git+<url or path>#<ref>:<file>, e.g. "
            "git+https://example.com/policy.git#main:matrix.yaml",
            field=FIELD,
        )
    if url.startswith("-") or url.lower().startswith("ext::"):
        raise UsageError(f"{url!r} is not a repository git may fetch from here", field=FIELD)
    if not _REF.match(ref):
        raise UsageError(f"{ref!r} is not a branch or tag name", field=FIELD)
    path = PurePosixPath(file)
    if not file or path.is_absolute() or ".." in path.parts or file.startswith("-"):
        raise UsageError(
            f"{file!r} is not a path inside the repository (relative, no `..`)", field=FIELD
        )
    return GitSource(url=url, ref=ref, file=str(path))


def _without_credentials(url: str) -> str:
    """`url` without its user info and with its query hidden (either may hold a token)."""
    if "://" not in url:
        return url  # a path, or scp-like user@host:path (the user name is no secret)
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    query = "<hidden>" if parts.query else ""
    return urlunsplit((parts.scheme, host, parts.path, query, parts.fragment))
