"""SUPPORTGATE_MATRIX_SOURCE: where the support matrix is kept, as the operator writes it
(`git+<url or path>#<ref>:<file>` or an https URL: docs/matrix-sources.md, Configuration).
A bad value is a UsageError naming the variable, so the service refuses to start with it.
`shown(...)` is the form kept in the database and shown by the API: without the user name,
password or token a URL may carry.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlsplit, urlunsplit

from supportgate.errors import UsageError

FIELD = "SUPPORTGATE_MATRIX_SOURCE"
_REF = re.compile(r"^(?!-)(?!.*\.\.)(?!.*//)[A-Za-z0-9._/+-]+(?<![./])$")
"""Branch and tag names (or full `refs/...` names) as git accepts them, in a narrower
alphabet; never an option (`-...`)."""
_HOST_NAME = re.compile(
    r"^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*\.?$"
)
"""A DNS name: dot-separated labels of letters, digits, `-` (not first or last) and `_`."""
_SCP_LIKE = re.compile(r"^[^/:]+:")
"""git's `[user@]host:path`, as git tells it from a local path: a colon before any slash."""


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
    if text.startswith("git+"):
        return _git(text.removeprefix("git+"))
    if text.lower().startswith("https://"):
        _check_url(text)
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
    if "://" in url:
        _check_url(url)
    elif _SCP_LIKE.match(url):
        _check_host(url, url.partition(":")[0].rpartition("@")[2])
    if not _REF.match(ref):
        raise UsageError(f"{ref!r} is not a branch or tag name", field=FIELD)
    path = PurePosixPath(file)
    if not file or path.is_absolute() or ".." in path.parts or file.startswith("-"):
        raise UsageError(
            f"{file!r} is not a path inside the repository (relative, no `..`)", field=FIELD
        )
    return GitSource(url=url, ref=ref, file=str(path))


def _check_url(url: str) -> None:
    """A URL whose host and port can be read, so that neither the start nor a poll meets
    one that cannot (urlsplit raises on `https://[::1/`, and so did every poll's log line)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading it checks it: ValueError when out of range or not a number
    except ValueError as exc:
        raise UsageError(f"{url!r} is not a URL: {exc}", field=FIELD) from None
    if parts.scheme.lower() != "file":
        _check_host(url, parts.hostname or "")


def _check_host(url: str, host: str) -> None:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        if not _HOST_NAME.match(host):
            raise UsageError(
                f"{url!r} names no host, or a malformed one ({host!r}): a DNS name, an IPv4 "
                "address or an [IPv6] address",
                field=FIELD,
            ) from None


def _without_credentials(url: str) -> str:
    """`url` without its user info and with its query hidden (either may hold a token)."""
    if "://" not in url:
        return url  # a path, or scp-like user@host:path (the user name is no secret)
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    query = "<hidden>" if parts.query else ""
    return urlunsplit((parts.scheme, host, parts.path, query, parts.fragment))
