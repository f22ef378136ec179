"""A matrix source poll that finds nothing new: its cost per poll, git and https, on SQLite.

Run: python -m bench.bench_matrix_source [--polls 20]

A git repository and an https server on loopback (tests/matrix_upstreams.py) hold the default
matrix, already synced once; each poll is MatrixSourceService.sync() as the scheduler runs it:
the state row read, the source asked (`git ls-remote`; a GET with If-None-Match answered 304),
the state row written. Baselines, in the same run: the one round trip a poll cannot avoid (the
same `git ls-remote` alone; the same conditional GET alone, on a fresh connection as a poll
makes one). A poll also costs a share of a minute, which says whether polling every minute is
cheap (target: under 1% of one core's minute, i.e. under 600 ms).
For contrast, a poll that finds a new commit (fetch, decode, publish, sweep queued).
"""

from __future__ import annotations

import argparse
import ssl
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

import httpx

from bench.common import Measurement, measure, table
from supportgate.config import Settings
from supportgate.runtime import Runtime
from tests.matrix_upstreams import GIT, GitRepo, https_server, matrix_yaml, with_sm90
from tests.signing import with_test_key


def _runtime(root: Path, source: str, *, ca_file: Path | None = None) -> Runtime:
    root.mkdir(parents=True, exist_ok=True)
    base = with_test_key(Settings.from_env({}))
    configured = replace(
        base,
        database_url=f"sqlite:///{root / 'supportgate.db'}",
        matrix_source=source,
        matrix_poll=60.0,
        matrix_cache_dir=root / "cache",
        matrix_ca_file=ca_file,
    )
    runtime = Runtime.build(configured)
    runtime.prepare_database(upgrade_schema=True)
    runtime.ledger.start()
    return runtime


def _polls(runtime: Runtime, polls: int) -> None:
    for _ in range(polls):
        outcome = runtime.matrix_source.sync()
        assert outcome == "unchanged", outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polls", type=int, default=20)
    args = parser.parse_args()
    polls: int = args.polls
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        rows: list[tuple[Measurement, Measurement]] = []

        repo = GitRepo(root / "repo")
        repo.commit(matrix_yaml("2026.11.1"))
        git = _runtime(root / "git", repo.source())
        try:
            assert git.matrix_source.sync() == "unchanged"  # the default matrix, as committed
            ls_remote = [GIT, "ls-remote", "--", str(repo.upstream), "refs/heads/main"]
            baseline = measure(
                "git ls-remote alone",
                lambda: [
                    subprocess.run(ls_remote, check=True, capture_output=True) for _ in range(polls)
                ],
                ops=polls,
            )
            poll = measure("git poll, no change", lambda: _polls(git, polls), ops=polls)
            rows.append((baseline, poll))

            def changed() -> None:
                repo.commit(with_sm90(f"2027.{changed.n}.1"))  # type: ignore[attr-defined]
                changed.n += 1  # type: ignore[attr-defined]
                assert git.matrix_source.sync() == "published"

            changed.n = 1  # type: ignore[attr-defined]
            new_commit = measure(
                "git poll, a new commit (commit included)", changed, ops=1, repeats=5
            )
        finally:
            git.stop()

        with https_server(root) as server:
            server.served.publish(matrix_yaml("2026.11.1"))
            https = _runtime(root / "https", server.url, ca_file=server.ca_file)
            try:
                assert https.matrix_source.sync() == "unchanged"
                etag = server.served.etag or ""
                verify = ssl.create_default_context(cafile=str(server.ca_file))

                def conditional_gets() -> None:
                    for _ in range(polls):
                        with httpx.Client(verify=verify) as client:
                            answer = client.get(server.url, headers={"if-none-match": etag})
                            assert answer.status_code == 304

                baseline = measure("conditional GET alone (304)", conditional_gets, ops=polls)
                poll = measure(
                    "https poll, no change (304)", lambda: _polls(https, polls), ops=polls
                )
                rows.append((baseline, poll))
            finally:
                https.stop()

    for baseline, poll in rows:
        print(table(f"{poll.name}: {polls} polls", [baseline, poll], baseline))
        print(f"\nshare of a minute: {poll.seconds_per_op / 60 * 100:.3f}%\n")
    print(table("for contrast", [new_commit], rows[0][1]))


if __name__ == "__main__":
    main()
