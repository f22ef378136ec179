"""Matrix sources through the API on SQLite and PostgreSQL: a commit to a real git repository
is published with its provenance and re-evaluates the fleet; the same content again, a bad
commit, a commit that reuses a version with other content and an unreachable source publish
nothing and show in GET /v1/matrix/source, /metrics and a `matrix.sync_failed` webhook (not in
GET /v1/alerts); an https source with its ETag; POST /v1/matrix/sync and the roles."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import update
from sqlmodel import col

from supportgate.audit.verify import verify_log
from supportgate.db import MatrixVersion
from supportgate.matrix_sources.services import PUBLISHER

from ..api import Api, running_api
from ..api_support import created, hardware
from ..clock import FakeClock
from ..matrix_upstreams import GitRepo, https_server, matrix_yaml, with_sm90
from ..receiver import running_receiver, verify
from ..waiting import wait_until

LONG_POLL_S = 3600.0
"""Only the start's sync and the test's own: no poll comes in between."""


@contextmanager
def following(db_url: str, source: str, tmp_path: Path, **settings: Any) -> Iterator[Api]:
    """The API following `source`, once its start's sync is over."""
    with running_api(
        db_url,
        matrix_source=source,
        matrix_poll=LONG_POLL_S,
        matrix_cache_dir=tmp_path / "cache",
        **settings,
    ) as api:
        wait_until(lambda: state(api)["last_sync_at"], "the start's sync")
        yield api


def state(api: Api) -> dict[str, Any]:
    response = api.client.get("/v1/matrix/source", headers=api.headers("procurement"))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def versions(api: Api) -> list[dict[str, Any]]:
    response = api.client.get("/v1/matrix/versions", headers=api.headers("procurement"))
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def alerts(api: Api) -> list[dict[str, Any]]:
    response = api.client.get("/v1/alerts", headers=api.headers("procurement"))
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def metric(api: Api, name: str) -> float | None:
    for line in api.client.get("/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def test_a_commit_is_published_with_its_provenance_and_sweeps_the_fleet(
    migrated_db_url: str, repo: GitRepo, tmp_path: Path
) -> None:
    first = repo.commit(matrix_yaml("2026.11.1"))  # the default matrix, as committed
    with following(migrated_db_url, repo.source(), tmp_path) as api:
        assert state(api)["revision"] == first
        assert [v["version"] for v in versions(api)] == ["2026.11.1"]  # same content: nothing
        created(api, hardware("pool-a"))

        commit = repo.commit(with_sm90("2026.12.1"), "list sm90")
        assert api.runtime.matrix_source.sync() == "published"

        newest = versions(api)[0]
        assert newest["version"] == "2026.12.1"
        assert newest["current"] is True
        assert newest["published_by"] == PUBLISHER
        provenance = newest["provenance"]
        assert provenance["source"] == repo.source()
        assert provenance["revision"] == commit
        assert provenance["fetched_at"].endswith("Z")
        one = api.client.get("/v1/matrix", headers=api.headers("procurement")).json()
        assert one["provenance"] == provenance
        assert versions(api)[1]["provenance"] is None  # the default, posted

        shown = state(api)
        assert (shown["revision"], shown["version"]) == (commit, "2026.12.1")
        assert shown["last_published_version"] == "2026.12.1"
        assert shown["last_error"] is None
        assert shown["last_success_at"] == shown["last_sync_at"]

        [alert] = wait_until(lambda: alerts(api), "the sweep's alert")
        assert (alert["cause"], alert["matrix_version"], alert["to"]) == (
            "matrix",
            "2026.12.1",
            "supported",
        )
        entry = api.client.get(
            "/v1/audit/entries/1", headers=api.headers("procurement")
        ).json()  # leaf 0: the default matrix; 1: pool-a's decision; the version after
        assert entry["type"] == "decision"
        published = api.client.get("/v1/audit/entries/2", headers=api.headers("procurement"))
        logged = json.loads(published.json()["entry"])
        assert logged["type"] == "matrix"
        assert logged["provenance"] == provenance  # the log covers the provenance
        verifier = api.runtime.checkpointer.verifier()
        assert verify_log(api.runtime.sessions, verifier=verifier).intact

        assert api.runtime.matrix_source.sync() == "unchanged"  # the ref did not move
        repo.commit(with_sm90("2026.12.1"), "the same matrix, another commit")
        assert api.runtime.matrix_source.sync() == "unchanged"
        assert len(versions(api)) == 2


def test_a_forged_provenance_is_found_by_audit_verify(
    migrated_db_url: str, repo: GitRepo, tmp_path: Path
) -> None:
    repo.commit(with_sm90("2026.12.1"))
    with following(migrated_db_url, repo.source(), tmp_path) as api:
        assert versions(api)[0]["provenance"]["revision"] == repo.head()
        forged = {**versions(api)[0]["provenance"], "revision": "0" * 40}
        with api.runtime.db.begin() as connection:
            connection.execute(
                update(MatrixVersion)
                .where(col(MatrixVersion.version) == "2026.12.1")
                .values(provenance=forged)
            )
        report = verify_log(api.runtime.sessions, verifier=api.runtime.checkpointer.verifier())
        assert not report.intact


def test_bad_content_and_a_reused_version_publish_nothing_and_are_told(
    migrated_db_url: str, repo: GitRepo, tmp_path: Path
) -> None:
    repo.commit(matrix_yaml("2026.11.1"))
    with running_receiver() as receiver, following(migrated_db_url, repo.source(), tmp_path) as api:
        subscribe = api.client.post(
            "/v1/webhooks", json={"url": receiver.url}, headers=api.headers("admin")
        )
        assert subscribe.status_code == 201, subscribe.text
        secret = subscribe.json()["secret"]
        assert metric(api, "supportgate_matrix_source_failures_total") == 0

        bad = repo.commit(b"version: '2026.12.1'\nengines: 12\n", "a bad commit")
        assert api.runtime.matrix_source.sync() == "failed"
        error = state(api)["last_error"]
        assert error["kind"] == "invalid"
        assert error["revision"] == bad
        assert error["field"] is not None
        assert error["field"].startswith("$")
        assert [v["version"] for v in versions(api)] == ["2026.11.1"]
        [told] = wait_until(receiver.received, "the sync_failed delivery")
        assert verify(secret, told)  # signed like an alert's delivery
        event = json.loads(told.body)
        assert event["type"] == "matrix.sync_failed"
        assert event["data"]["source"] == repo.source()
        assert event["data"]["error"]["kind"] == "invalid"
        assert event["data"]["error"]["revision"] == bad

        assert api.runtime.matrix_source.sync() == "failed"  # the same commit fails again...
        assert state(api)["consecutive_failures"] == 2
        assert metric(api, "supportgate_matrix_source_failures_total") == 2
        assert metric(api, "supportgate_matrix_source_consecutive_failures") == 2

        reused = repo.commit(with_sm90("2026.11.1"), "2026.11.1 again, other content")
        assert api.runtime.matrix_source.sync() == "failed"
        error = state(api)["last_error"]
        assert (error["kind"], error["field"], error["revision"]) == (
            "conflict",
            "$.version",
            reused,
        )
        assert [v["version"] for v in versions(api)] == ["2026.11.1"]
        wait_until(lambda: len(receiver.received()) == 2, "the conflict's delivery")
        conflict = json.loads(receiver.received()[1].body)
        assert conflict["data"]["error"]["kind"] == "conflict"

        assert alerts(api) == []  # GET /v1/alerts stays verdict changes

        repo.commit(with_sm90("2026.12.1"))
        assert api.runtime.matrix_source.sync() == "published"
        shown = state(api)
        assert (shown["last_error"], shown["consecutive_failures"]) == (None, 0)
        assert metric(api, "supportgate_matrix_source_failures_total") == 3
        assert len(receiver.received()) == 2  # ...and is told once


def test_an_unreachable_source_publishes_nothing_until_it_is_back(
    migrated_db_url: str, repo: GitRepo, tmp_path: Path
) -> None:
    repo.commit(matrix_yaml("2026.11.1"))
    with following(migrated_db_url, repo.source(), tmp_path) as api:
        success = state(api)["last_success_at"]
        assert metric(api, "supportgate_matrix_source_last_success_timestamp_seconds")
        moved = repo.upstream.with_name("moved.git")
        shutil.move(repo.upstream, moved)

        assert api.runtime.matrix_source.sync() == "failed"
        shown = state(api)
        assert shown["last_error"]["kind"] == "unreachable"
        assert shown["last_error"]["revision"] is None
        assert shown["last_success_at"] == success
        assert shown["revision"] is not None  # the last revision read stays known

        shutil.move(moved, repo.upstream)
        assert api.runtime.matrix_source.sync() == "unchanged"
        assert state(api)["last_error"] is None


def test_a_poll_that_fails_outside_git_is_recorded_every_time(
    migrated_db_url: str, repo: GitRepo, tmp_path: Path, clock: FakeClock
) -> None:
    """A failure that is not git's answer (here the cache directory is a file, so the bare
    repository cannot be made) used to be logged and recorded nowhere: GET /v1/matrix/source
    showed no error while every poll failed. Each failed poll is recorded, with its time."""
    repo.commit(matrix_yaml("2026.12.1"))
    blocked = tmp_path / "cache"
    blocked.write_text("not a directory")
    with running_api(
        migrated_db_url,
        clock=clock,
        matrix_source=repo.source(),
        matrix_poll=LONG_POLL_S,
        matrix_cache_dir=blocked,
    ) as api:
        wait_until(lambda: state(api)["last_sync_at"], "the start's sync")
        first = state(api)
        assert first["last_error"] is not None, first
        assert first["last_error"]["kind"] == "unreachable"
        assert str(blocked) in first["last_error"]["message"]
        assert first["last_error"]["at"] == first["last_sync_at"]
        assert first["last_success_at"] is None

        clock.advance(LONG_POLL_S)
        assert api.runtime.matrix_source.poll() == "failed"
        again = state(api)
        assert again["last_sync_at"] > first["last_sync_at"]
        assert again["consecutive_failures"] == first["consecutive_failures"] + 1
        assert again["last_error"]["message"] == first["last_error"]["message"]
        assert versions(api)[0]["version"] == "2026.11.1"  # nothing published


def test_a_force_push_to_a_new_version_is_published_at_the_rewritten_commit(
    migrated_db_url: str, repo: GitRepo, tmp_path: Path
) -> None:
    repo.commit(matrix_yaml("2026.11.1"))
    with following(migrated_db_url, repo.source(), tmp_path) as api:
        repo.commit(with_sm90("2026.12.1"))
        assert api.runtime.matrix_source.sync() == "published"
        rewritten = repo.rewrite(with_sm90("2026.12.2"))
        assert api.runtime.matrix_source.sync() == "published"
        assert versions(api)[0]["provenance"]["revision"] == rewritten
        assert state(api)["revision"] == rewritten


def test_an_https_source_is_published_with_its_etag(migrated_db_url: str, tmp_path: Path) -> None:
    with https_server(tmp_path) as server:
        server.served.publish(with_sm90("2026.12.1"))
        with following(migrated_db_url, server.url, tmp_path, matrix_ca_file=server.ca_file) as api:
            [newest, _default] = versions(api)
            assert newest["version"] == "2026.12.1"
            assert newest["provenance"]["revision"] == server.served.etag
            assert api.runtime.matrix_source.sync() == "unchanged"
            assert server.served.requests[-1]["if-none-match"] == server.served.etag

            server.served.script.append(500)
            assert api.runtime.matrix_source.sync() == "failed"
            assert "answered 500" in state(api)["last_error"]["message"]


def test_a_poll_skips_while_a_sync_is_younger_than_half_an_interval(
    migrated_db_url: str, repo: GitRepo, tmp_path: Path
) -> None:
    repo.commit(matrix_yaml("2026.11.1"))
    clock = FakeClock()
    with following(migrated_db_url, repo.source(), tmp_path, clock=clock) as api:
        synced = state(api)["last_sync_at"]
        repo.commit(with_sm90("2026.12.1"))
        clock.advance(LONG_POLL_S / 2 - 1)
        assert api.runtime.matrix_source.poll() == "skipped"  # another replica's, as it were
        assert state(api)["last_sync_at"] == synced
        clock.advance(1)
        assert api.runtime.matrix_source.poll() == "published"


def test_post_sync_reads_the_source_after_its_202(
    migrated_db_url: str, repo: GitRepo, tmp_path: Path
) -> None:
    repo.commit(matrix_yaml("2026.11.1"))
    with following(migrated_db_url, repo.source(), tmp_path) as api:
        commit = repo.commit(with_sm90("2026.12.1"))
        for role in (None, "ci", "procurement"):
            refused = api.client.post("/v1/matrix/sync", headers=api.headers(role))
            assert refused.status_code == (401 if role is None else 403)
        response = api.client.post("/v1/matrix/sync", headers=api.headers("admin"))
        assert response.status_code == 202, response.text
        assert response.json()["source"] == repo.source()
        wait_until(lambda: state(api)["revision"] == commit, "the requested sync")
        assert versions(api)[0]["version"] == "2026.12.1"


def test_the_source_is_shown_to_procurement_without_credentials(
    migrated_db_url: str, tmp_path: Path
) -> None:
    source = "git+https://bot:s3cret@git.example.com/policy.git#main:matrix.yaml"
    with running_api(
        migrated_db_url,
        matrix_source=source,
        matrix_poll=LONG_POLL_S,
        matrix_cache_dir=tmp_path / "cache",
        matrix_fetch_timeout=0.5,
    ) as api:
        assert api.client.get("/v1/matrix/source").status_code == 401
        assert api.client.get("/v1/matrix/source", headers=api.headers("ci")).status_code == 403
        shown = state(api)
        assert shown["source"] == "git+https://git.example.com/policy.git#main:matrix.yaml"
        assert shown["kind"] == "git"
        assert shown["poll_seconds"] == LONG_POLL_S
        assert "s3cret" not in json.dumps(shown)


def test_without_a_source_nothing_is_followed(api: Api) -> None:
    shown = state(api)
    assert (shown["source"], shown["last_sync_at"], shown["last_error"]) == (None, None, None)
    response = api.client.post("/v1/matrix/sync", headers=api.headers("admin"))
    assert response.status_code == 409
    assert response.json()["field"] == "SUPPORTGATE_MATRIX_SOURCE"
    assert metric(api, "supportgate_matrix_source_failures_total") is None
