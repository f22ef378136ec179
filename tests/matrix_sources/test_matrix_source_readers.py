"""The matrix source readers against the real thing: a git repository made here (commits, a
force-push that rewrites history, tags, a missing file) and an https server on loopback (ETag,
304, 500, a redirect, a stall cut off by a short deadline, a certificate not trusted)."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from supportgate.matrix_sources.fetch import (
    MAX_BYTES,
    Fetched,
    NoDocument,
    SourceUnreachable,
    Unchanged,
)
from supportgate.matrix_sources.git import GitReader
from supportgate.matrix_sources.https import HttpsReader
from supportgate.matrix_sources.spec import GitSource, HttpsSource, parse_source

from ..matrix_upstreams import GIT, STALL, GitRepo, HttpsServer, https_server, matrix_yaml

SHORT_DEADLINE_S = 0.5


def _git_reader(repo: GitRepo, tmp_path: Path, *, ref: str | None = None) -> GitReader:
    source = parse_source(repo.source(ref))
    assert isinstance(source, GitSource)
    return GitReader(source, tmp_path / "cache", deadline=30.0)


def test_git_reads_the_commit_then_nothing_until_the_ref_moves(
    repo: GitRepo, tmp_path: Path
) -> None:
    first = repo.commit(matrix_yaml("2026.12.1"))
    reader = _git_reader(repo, tmp_path)

    read = reader.read(None)
    assert isinstance(read, Fetched)
    assert read.revision == first
    assert read.content == matrix_yaml("2026.12.1")
    assert read.fmt == "yaml"
    assert reader.read(first) == Unchanged(first)

    second = repo.commit(matrix_yaml("2026.12.2"))
    read = reader.read(first)
    assert isinstance(read, Fetched)
    assert (read.revision, read.content) == (second, matrix_yaml("2026.12.2"))


def test_git_fetches_shallow_into_the_cache_directory(repo: GitRepo, tmp_path: Path) -> None:
    for n in range(3):
        repo.commit(matrix_yaml(f"2026.12.{n}"))
    reader = _git_reader(repo, tmp_path)
    read = reader.read(None)
    assert isinstance(read, Fetched)
    [cached] = (tmp_path / "cache" / "git").iterdir()
    assert (cached / "shallow").exists()
    count = subprocess.run(
        [GIT, "rev-list", "--count", read.revision],
        cwd=cached,
        capture_output=True,
        text=True,
        check=True,
    )
    assert count.stdout.strip() == "1"  # one commit of the three was fetched


def test_a_force_push_that_rewrites_history_is_read(repo: GitRepo, tmp_path: Path) -> None:
    repo.commit(matrix_yaml("2026.12.1"))
    pushed = repo.commit(matrix_yaml("2026.12.2"))
    reader = _git_reader(repo, tmp_path)
    assert isinstance(reader.read(None), Fetched)

    rewritten = repo.rewrite(matrix_yaml("2026.12.3"))
    assert not repo.is_ancestor(pushed, rewritten)  # history was rewritten, not extended
    read = reader.read(pushed)
    assert isinstance(read, Fetched)
    assert (read.revision, read.content) == (rewritten, matrix_yaml("2026.12.3"))
    assert reader.read(rewritten) == Unchanged(rewritten)


def test_a_tag_is_read_at_its_commit(repo: GitRepo, tmp_path: Path) -> None:
    commit = repo.commit(matrix_yaml("2026.12.1"))
    subprocess.run(
        [GIT, "-c", "user.name=t", "-c", "user.email=t@e", "tag", "-a", "-m", "t", "v1"],
        cwd=repo.work,
        check=True,
    )
    subprocess.run([GIT, "push", "--quiet", "origin", "v1"], cwd=repo.work, check=True)
    repo.commit(matrix_yaml("2026.12.2"))  # the branch moves on; the tag does not

    read = _git_reader(repo, tmp_path, ref="v1").read(None)
    assert isinstance(read, Fetched)
    assert (read.revision, read.content) == (commit, matrix_yaml("2026.12.1"))


def test_a_commit_without_the_file_is_no_document(repo: GitRepo, tmp_path: Path) -> None:
    commit = repo.commit(matrix_yaml("2026.12.1"))
    source = GitSource(url=str(repo.upstream), ref="main", file="elsewhere/matrix.yaml")
    with pytest.raises(NoDocument, match=r"has no file 'elsewhere/matrix\.yaml'") as caught:
        GitReader(source, tmp_path / "cache", deadline=30.0).read(None)
    assert caught.value.revision == commit


def test_a_file_over_the_cap_is_refused_before_it_is_read(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The https source's cap (MAX_BYTES), asked of git (`cat-file -s`) before the blob is
    read: a 200 MB matrix file once added 350 MB to the service's memory before it was
    refused. The reader never runs the command that reads the blob."""
    commit = repo.commit(b"#" * (MAX_BYTES + 1))
    reader = _git_reader(repo, tmp_path)
    commands: list[list[str]] = []
    run = GitReader._git

    def recorded(self: GitReader, args: list[str], ends: float) -> bytes:
        commands.append(args)
        return run(self, args, ends)

    monkeypatch.setattr(GitReader, "_git", recorded)
    with pytest.raises(
        NoDocument, match=rf"{MAX_BYTES + 1} bytes, more than {MAX_BYTES}"
    ) as caught:
        reader.read(None)
    assert caught.value.revision == commit
    assert ["cat-file", "-s", f"{commit}:matrix.yaml"] in commands
    assert not [args for args in commands if args[:2] == ["cat-file", "blob"]]

    at_cap = repo.commit(b"#" * MAX_BYTES)  # as large as the cap: read
    read = reader.read(commit)
    assert isinstance(read, Fetched)
    assert (read.revision, len(read.content)) == (at_cap, MAX_BYTES)


def test_an_unknown_branch_or_repository_is_unreachable(repo: GitRepo, tmp_path: Path) -> None:
    repo.commit(matrix_yaml("2026.12.1"))
    with pytest.raises(SourceUnreachable, match="has no branch or tag 'nope'"):
        _git_reader(repo, tmp_path, ref="nope").read(None)
    gone = GitSource(url=str(tmp_path / "missing.git"), ref="main", file="matrix.yaml")
    with pytest.raises(SourceUnreachable, match="git ls-remote failed"):
        GitReader(gone, tmp_path / "cache", deadline=30.0).read(None)


@pytest.fixture
def stalling_http() -> Iterator[str]:
    """A plain-HTTP server on loopback that accepts and never answers (until the test ends)."""
    release = threading.Event()

    class Stall(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            release.wait(60)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Stall)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/repo.git"
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def test_git_is_cut_off_at_the_deadline(stalling_http: str, tmp_path: Path) -> None:
    source = GitSource(url=stalling_http, ref="main", file="matrix.yaml")
    reader = GitReader(source, tmp_path / "cache", deadline=SHORT_DEADLINE_S)
    # Only the reader's own deadline says this: left to git, the stall ends after a minute in
    # an empty answer, which git reports otherwise.
    with pytest.raises(SourceUnreachable, match=r"no answer within the deadline of 0\.5 s"):
        reader.read(None)


@pytest.fixture
def https(tmp_path: Path) -> Iterator[HttpsServer]:
    with https_server(tmp_path) as server:
        yield server


def _https_reader(server: HttpsServer, *, deadline: float = 30.0) -> HttpsReader:
    return HttpsReader(HttpsSource(server.url), deadline=deadline, ca_file=server.ca_file)


def test_https_sends_the_etag_and_a_304_is_unchanged(https: HttpsServer) -> None:
    https.served.publish(matrix_yaml("2026.12.1"))
    reader = _https_reader(https)
    read = reader.read(None)
    assert isinstance(read, Fetched)
    assert read.revision == https.served.etag
    assert read.content == matrix_yaml("2026.12.1")
    assert "if-none-match" not in https.served.requests[0]

    assert reader.read(read.revision) == Unchanged(read.revision)
    assert https.served.requests[1]["if-none-match"] == read.revision

    https.served.publish(matrix_yaml("2026.12.2"))
    again = reader.read(read.revision)
    assert isinstance(again, Fetched)
    assert again.revision == https.served.etag != read.revision


def test_https_without_an_etag_is_known_by_its_digest(https: HttpsServer) -> None:
    https.served.publish(matrix_yaml("2026.12.1"), etag=False)
    reader = _https_reader(https)
    read = reader.read(None)
    assert isinstance(read, Fetched)
    assert read.revision.startswith("sha256:")
    assert reader.read(read.revision) == Unchanged(read.revision)
    assert "if-none-match" not in https.served.requests[1]  # a digest is no ETag


@pytest.mark.parametrize(("status", "says"), [(500, "answered 500"), (302, "answered 302")])
def test_https_other_answers_are_unreachable(https: HttpsServer, status: int, says: str) -> None:
    https.served.publish(matrix_yaml("2026.12.1"))
    https.served.script.append(status)
    with pytest.raises(SourceUnreachable, match=says):
        _https_reader(https).read(None)


def test_https_is_cut_off_at_the_deadline(https: HttpsServer) -> None:
    https.served.publish(matrix_yaml("2026.12.1"))
    https.served.script.append(STALL)
    # Only the reader's own deadline says this: left to itself, the stall ends after a minute
    # in a connection closed unanswered, which reads otherwise.
    with pytest.raises(SourceUnreachable, match=r"no answer within the deadline of 0\.5 s"):
        _https_reader(https, deadline=SHORT_DEADLINE_S).read(None)


def test_https_checks_the_certificate(https: HttpsServer) -> None:
    https.served.publish(matrix_yaml("2026.12.1"))
    reader = HttpsReader(HttpsSource(https.url), deadline=30.0, ca_file=None)
    with pytest.raises(SourceUnreachable, match="CERTIFICATE_VERIFY_FAILED"):
        reader.read(None)
