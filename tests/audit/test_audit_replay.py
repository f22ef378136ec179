"""The stored policy input is enough to replay a decision, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from supportgate.audit.replay import CannotReplay, replay_decision

from ..api import Api
from ..api_support import post_examples


def test_every_example_decision_replays(api: Api) -> None:
    for body in post_examples(api):
        assert replay_decision(api.runtime, body["id"]).reproduced, body["manifest"]


def test_replay_needs_nothing_but_the_audit_row(api: Api, examples_dir: Path) -> None:
    """The deployment's hardware pool is changed and then untracked: the stored input still
    holds the pool as it was evaluated, so the old decision replays."""
    api.post_manifest(examples_dir / "hw-h100-pool-a.yaml")
    deployment = api.post_manifest(examples_dir / "dep-h100-port-trial.yaml").json()
    pool = (examples_dir / "hw-h100-pool-a.yaml").read_text()
    changed = api.client.post(
        "/v1/evaluations",
        content=pool.replace("nodes: 8", "nodes: 1"),
        headers=api.headers("ci", **{"Content-Type": "application/yaml"}),
    )
    assert changed.status_code == 201, changed.text
    gone = api.client.delete(
        "/v1/manifests/HardwareManifest/h100-pool-a", headers=api.headers("admin")
    )
    assert gone.status_code == 204
    outcome = replay_decision(api.runtime, deployment["id"])
    assert outcome.reproduced
    assert outcome.replayed["verdict"] == deployment["verdict"]
    assert outcome.replayed["violations"] == deployment["violations"]


def test_an_edited_decision_does_not_replay(api: Api, examples_dir: Path) -> None:
    body = api.post_manifest(examples_dir / "hw-h100-pool-a.yaml").json()
    with api.runtime.db.begin() as connection:
        connection.execute(
            text("UPDATE decisions SET verdict = 'supported' WHERE id = :id"), {"id": body["id"]}
        )
    assert not replay_decision(api.runtime, body["id"]).reproduced


def test_an_edited_input_does_not_replay(api: Api, examples_dir: Path) -> None:
    body = api.post_manifest(examples_dir / "hw-h100-pool-a.yaml").json()
    with api.runtime.db.begin() as connection:
        connection.execute(
            text("UPDATE decisions SET policy_input = replace(policy_input, 'sm90', 'sm100')")
        )
    outcome = replay_decision(api.runtime, body["id"])
    assert not outcome.input_matches
    assert not outcome.reproduced


def test_what_cannot_be_replayed(sqlite_api: Api, examples_dir: Path) -> None:
    with pytest.raises(CannotReplay, match="no decision"):
        replay_decision(sqlite_api.runtime, "no-such-id")
    body = sqlite_api.post_manifest(examples_dir / "hw-b200-pool.yaml").json()
    with sqlite_api.runtime.db.begin() as connection:
        connection.execute(text("UPDATE decisions SET matrix_version = 'gone'"))
    with pytest.raises(CannotReplay, match="matrix_version"):
        replay_decision(sqlite_api.runtime, body["id"])
    with sqlite_api.runtime.db.begin() as connection:
        connection.execute(text("UPDATE decisions SET policy_revision = 'sha256:older'"))
    with pytest.raises(CannotReplay, match="policy_revision"):
        replay_decision(sqlite_api.runtime, body["id"])
