"""`supportgate serve` following a git repository made here, with a short poll: a commit is
published, with its commit as provenance, and re-evaluates the fleet without anyone posting it;
two replicas on one PostgreSQL following the same repository publish it once."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..examples import EXAMPLES
from ..matrix_upstreams import GitRepo, matrix_yaml, with_sm90
from ..server import Served, clean_env, make_keys, run_cli, serving
from ..services import free_port, temporary_database
from ..waiting import wait_until

POLL = "1s"


def _get(server: Served, path: str, key: str) -> Any:
    response = httpx.get(server.url + path, headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def _env(database_url: str, repo: GitRepo) -> dict[str, str]:
    return clean_env(
        SUPPORTGATE_DATABASE_URL=database_url,
        SUPPORTGATE_MATRIX_SOURCE=repo.source(),
        SUPPORTGATE_MATRIX_POLL=POLL,
    )


def _current(server: Served, key: str, version: str) -> dict[str, Any] | None:
    current: dict[str, Any] = _get(server, "/v1/matrix", key)
    return current if current["version"] == version else None


def test_a_commit_is_published_and_sweeps_without_anyone_posting_it(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit(matrix_yaml("2026.11.1"))
    url = f"sqlite:///{tmp_path / 'work' / 'supportgate.db'}"
    (tmp_path / "work").mkdir()
    keys = make_keys(url)
    with serving(tmp_path / "work", env=_env(url, repo)) as server:
        posted = httpx.post(
            server.url + "/v1/evaluations",
            content=(EXAMPLES / "hw-h100-pool-a.yaml").read_bytes(),
            headers={"Authorization": f"Bearer {keys['ci']}", "Content-Type": "application/yaml"},
            timeout=10,
        )
        assert posted.status_code == 201, posted.text
        assert posted.json()["verdict"] == "experimental"

        first = repo.head()
        wait_until(  # the start's sync is over: what follows is the scheduler's polls
            lambda: _get(server, "/v1/matrix/source", keys["procurement"])["revision"] == first,
            "the start's sync",
        )
        commit = repo.commit(with_sm90("2026.12.1"), "list sm90")
        current = wait_until(
            lambda: _current(server, keys["procurement"], "2026.12.1"), "the commit's version"
        )
        assert current["provenance"]["revision"] == commit
        assert current["provenance"]["source"] == repo.source()
        [alert] = wait_until(
            lambda: _get(server, "/v1/alerts", keys["procurement"])["items"], "the sweep's alert"
        )
        assert (alert["cause"], alert["to"], alert["matrix_version"]) == (
            "matrix",
            "supported",
            "2026.12.1",
        )
        source = _get(server, "/v1/matrix/source", keys["procurement"])
        assert (source["revision"], source["last_error"]) == (commit, None)
        assert (tmp_path / "work" / "supportgate-matrix-cache" / "git").is_dir()  # the default


@pytest.mark.postgres
def test_two_replicas_publish_a_commit_once(postgres_url: str, tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit(matrix_yaml("2026.11.1"))
    with temporary_database(postgres_url) as url:
        keys = make_keys(url)
        env = _env(url, repo)
        with serving(tmp_path / "a", env=env) as first, serving(tmp_path / "b", env=env) as second:
            commit = repo.commit(with_sm90("2026.12.1"))
            for server in (first, second):
                wait_until(
                    partial(_current, server, keys["procurement"], "2026.12.1"),
                    "the version on every replica",
                )
            # Polls go on after the publication (one a second between the two): once the
            # replicas have synced again two seconds on, none may have published it again.
            published_at = datetime.fromisoformat(
                _get(first, "/v1/matrix", keys["procurement"])["published_at"]
            )
            wait_until(
                lambda: (
                    datetime.fromisoformat(
                        _get(second, "/v1/matrix/source", keys["procurement"])["last_sync_at"]
                    )
                    > published_at + timedelta(seconds=2)
                ),
                "later polls",
            )
            published = [
                event
                for server in (first, second)
                for event in server.log_events()
                if event.get("event") == "matrix_source_published"
            ]
            assert [e["revision"] for e in published] == [commit]
            versions = _get(first, "/v1/matrix/versions", keys["procurement"])["items"]
            assert [v["version"] for v in versions] == ["2026.12.1", "2026.11.1"]
            source = _get(second, "/v1/matrix/source", keys["procurement"])
            assert json.dumps(source["last_error"]) == "null"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SUPPORTGATE_MATRIX_SOURCE", "http://vendor.example.com/matrix.yaml"),
        ("SUPPORTGATE_MATRIX_SOURCE", "https://[::1/matrix.yaml"),  # was a raw traceback
        ("SUPPORTGATE_MATRIX_SOURCE", "git+https://[::1/policy.git#main:matrix.yaml"),
        ("SUPPORTGATE_MATRIX_POLL", "5 minutes"),
    ],
)
def test_serve_refuses_a_bad_matrix_source_naming_the_variable(
    tmp_path: Path, variable: str, value: str
) -> None:
    done = run_cli(
        ["serve", "--port", str(free_port())],
        env=clean_env(
            SUPPORTGATE_DATABASE_URL=f"sqlite:///{tmp_path / 'supportgate.db'}", **{variable: value}
        ),
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert variable in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
