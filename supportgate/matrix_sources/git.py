"""A git source, read with the `git` command (no library: git itself speaks every transport
and credential helper an operator already set up, and a shallow fetch is one command). What a
read does and how the commands are confined: docs/matrix-sources.md. If the ref moves between
`ls-remote` and the fetch, the commit read is the one fetched (the newer one)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import time
from pathlib import Path

from supportgate.manifests import format_of

from .fetch import MAX_BYTES, Fetched, NoDocument, SourceUnreachable, Unchanged
from .spec import GitSource

LOCAL_REF = "refs/supportgate/source"
MAX_MESSAGE = 500


class GitReader:
    def __init__(self, source: GitSource, cache_dir: Path, *, deadline: float) -> None:
        """`cache_dir` holds a bare repository per source URL; `deadline` is for one read, all
        its commands together."""
        self._source = source
        self._url = _absolute(source.url)
        digest = hashlib.sha256(self._url.encode()).hexdigest()[:16]
        self._repository = cache_dir / "git" / digest
        self._deadline = deadline

    def read(self, known: str | None) -> Fetched | Unchanged:
        ends = time.monotonic() + self._deadline
        ref, commit = self._remote_head(ends)
        if commit == known:
            return Unchanged(commit)
        self._prepare_cache(ends)
        self._git(
            ["fetch", "--depth=1", "--no-tags", "--quiet", "--", self._url, f"+{ref}:{LOCAL_REF}"],
            ends,
        )
        fetched = self._git(["rev-parse", "--verify", f"{LOCAL_REF}^{{commit}}"], ends)
        revision = fetched.decode().strip()
        file = self._source.file
        blob = f"{revision}:{file}"
        try:
            size = int(self._git(["cat-file", "-s", blob], ends))
        except SourceUnreachable as exc:
            raise NoDocument(f"commit {revision} has no file {file!r}", revision=revision) from exc
        if size > MAX_BYTES:  # asked before reading: the blob would be read whole into memory
            raise NoDocument(
                f"{file!r} at commit {revision} is {size} bytes, more than {MAX_BYTES}",
                revision=revision,
            )
        content = self._git(["cat-file", "blob", blob], ends)
        return Fetched(revision=revision, content=content, fmt=format_of(file))

    def _remote_head(self, ends: float) -> tuple[str, str]:
        ref = self._source.ref
        candidates = [ref] if ref.startswith("refs/") else [f"refs/heads/{ref}", f"refs/tags/{ref}"]
        listed = self._git(["ls-remote", "--", self._url, *candidates], ends)
        found: dict[str, str] = {}
        for line in listed.decode().splitlines():
            sha, _, name = line.partition("\t")
            found[name] = sha
        for candidate in candidates:
            # An annotated tag is listed twice: the tag object, and `^{}` peeled to its commit.
            commit = found.get(f"{candidate}^{{}}") or found.get(candidate)
            if commit:
                return candidate, commit
        raise SourceUnreachable(f"{self._source.shown} has no branch or tag {ref!r}")

    def _prepare_cache(self, ends: float) -> None:
        if (self._repository / "HEAD").exists():
            return
        self._repository.mkdir(parents=True, exist_ok=True)
        self._git(["init", "--bare", "--quiet", str(self._repository)], ends)

    def _git(self, args: list[str], ends: float) -> bytes:
        where = None if args[0] in {"init", "ls-remote"} else self._repository
        remaining = ends - time.monotonic()
        if remaining <= 0:
            raise SourceUnreachable(self._late())
        command = ["git", "-c", "protocol.ext.allow=never", *args]
        with subprocess.Popen(  # a fixed command; the URL comes after `--`
            command,
            cwd=where,
            env=_environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own group: killed with its helpers (ssh, remote-https)
        ) as process:
            try:
                out, err = process.communicate(timeout=remaining)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
                raise SourceUnreachable(self._late()) from None
        if process.returncode != 0:
            message = err.decode(errors="replace").strip().replace(self._url, self._source.shown)
            raise SourceUnreachable(
                f"git {args[0]} failed: {message[-MAX_MESSAGE:] or f'exit {process.returncode}'}"
            )
        return out

    def _late(self) -> str:
        return f"{self._source.shown}: no answer within the deadline of {self._deadline:g} s"


def _absolute(url: str) -> str:
    """A local path made absolute (git runs in the cache directory); URLs as they are."""
    if "://" in url:
        return url
    before_colon = url.partition(":")[0]
    if ":" in url and "/" not in before_colon:
        return url  # scp-like host:path
    return os.path.abspath(url)


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    return env
