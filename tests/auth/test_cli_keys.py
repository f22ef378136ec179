"""`supportgate keys create|list|revoke` as an operator uses them, on SQLite and PostgreSQL:
the key alone on the last stdout line, only its sha256 stored, usable at once; owners and an
expiry stored; a revoked key refused; bad requests exit 2 naming the option."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from supportgate.cli import main
from supportgate.db import create_db_engine

from ..api import running_api
from ..server import clean_env, run_cli
from ..waiting import wait_until

CREATED_EXPIRES = ("created_at", "expires_at")
KEY = re.compile(r"sg_[A-Za-z0-9_-]{43}")


def _api_keys(database_url: str) -> list[dict[str, Any]]:
    engine = create_db_engine(database_url)
    try:
        with engine.connect() as connection:
            result = connection.execute(text("SELECT * FROM api_keys ORDER BY id"))
            return [dict(row._mapping) for row in result]
    finally:
        engine.dispose()


def test_keys_create_prints_the_key_last_and_stores_only_its_hash(
    db_url: str, tmp_path: Path
) -> None:
    done = run_cli(
        ["keys", "create", "--role", "ci", "--name", "x"],
        env=clean_env(SUPPORTGATE_DATABASE_URL=db_url),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    secret = lines[-1]
    assert KEY.fullmatch(secret), lines
    assert all(secret not in line for line in lines[:-1])
    assert secret not in done.stderr

    (row,) = _api_keys(db_url)
    assert (row["name"], row["role"]) == ("x", "ci")
    assert row["key_hash"] == hashlib.sha256(secret.encode()).hexdigest()
    assert row["prefix"] == secret[:8]
    assert row["revoked_at"] is None
    stored = " ".join(str(value) for value in row.values())
    assert secret not in stored
    assert secret[8:] not in stored

    # The key works at once against a service on the same database, with its role.
    with running_api(db_url) as api:
        headers = {"Authorization": f"Bearer {secret}"}
        assert api.client.get("/schema/openapi.json", headers=headers).status_code == 200
        assert api.client.get("/v1/manifests", headers=headers).status_code == 403


def test_every_role_can_be_created_and_each_key_differs(
    migrated_db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", migrated_db_url)
    secrets = []
    for role in ("ci", "procurement", "admin"):
        assert main(["keys", "create", "--role", role, "--name", f"team-{role}"]) == 0
        secrets.append(capsys.readouterr().out.splitlines()[-1])
    assert len(set(secrets)) == 3
    assert [(row["name"], row["role"]) for row in _api_keys(migrated_db_url)] == [
        ("team-ci", "ci"),
        ("team-procurement", "procurement"),
        ("team-admin", "admin"),
    ]


def test_a_duplicate_name_exits_2_and_keeps_the_first_key(
    migrated_db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", migrated_db_url)
    assert main(["keys", "create", "--role", "ci", "--name", "deploy-bot"]) == 0
    first = capsys.readouterr().out.splitlines()[-1]
    assert main(["keys", "create", "--role", "admin", "--name", "deploy-bot"]) == 2
    captured = capsys.readouterr()
    assert "deploy-bot" in captured.err
    assert "already exists" in captured.err
    assert not KEY.search(captured.out)
    (row,) = _api_keys(migrated_db_url)
    assert row["role"] == "ci"
    assert row["key_hash"] == hashlib.sha256(first.encode()).hexdigest()


@pytest.mark.parametrize(
    "argv",
    [
        ["keys", "create", "--role", "root", "--name", "x"],
        ["keys", "create", "--role", "CI", "--name", "x"],
        ["keys", "create", "--name", "x"],
        ["keys", "create", "--role", "ci"],
        ["keys", "create", "--role", "ci", "--name", "has space"],
        ["keys", "create", "--role", "ci", "--name", ""],
        ["keys", "create", "--role", "ci", "--name", "x" * 65],
        ["keys", "create", "--role", "ci", "--name", "x", "--owner", ""],
        ["keys", "create", "--role", "ci", "--name", "x", "--expires-in", "0d"],
        ["keys", "create", "--role", "ci", "--name", "x", "--expires-in", "90"],
    ],
    ids=[
        "unknown-role",
        "role-case",
        "no-role",
        "no-name",
        "space",
        "empty",
        "too-long",
        "empty-owner",
        "no-time",
        "no-unit",
    ],
)
def test_a_bad_request_exits_2_and_creates_nothing(
    migrated_db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", migrated_db_url)
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse refuses before anything runs
        code = int(exit_.code or 0)
    assert code == 2
    captured = capsys.readouterr()
    assert "supportgate: error:" in captured.err
    assert not KEY.search(captured.out)
    assert _api_keys(migrated_db_url) == []


def test_owners_on_an_admin_key_exit_2_naming_the_option(
    migrated_db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", migrated_db_url)
    argv = ["keys", "create", "--role", "admin", "--name", "research-admin", "--owner", "research"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "--owner" in captured.err
    assert "admin" in captured.err
    assert not KEY.search(captured.out)
    assert _api_keys(migrated_db_url) == []


def test_keys_and_serve_agree_on_the_default_database(tmp_path: Path) -> None:
    """Without SUPPORTGATE_DATABASE_URL the key goes to supportgate.db in the working directory."""
    done = run_cli(
        ["keys", "create", "--role", "admin", "--name", "first"], env=clean_env(), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    database = tmp_path / "supportgate.db"
    assert database.is_file()
    (row,) = _api_keys(f"sqlite:///{database}")
    assert row["key_hash"] == hashlib.sha256(done.stdout.splitlines()[-1].encode()).hexdigest()


def test_owners_and_expiry_are_listed_and_revoke_refuses_the_key(
    migrated_db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", migrated_db_url)
    argv = ["keys", "create", "--role", "ci", "--name", "team-a", "--owner", "infra"]
    assert main([*argv, "--owner", "infra-lab", "--expires-in", "90d"]) == 0
    secret = capsys.readouterr().out.splitlines()[-1]
    (row,) = _api_keys(migrated_db_url)
    owners = row["owners"]  # JSON text on SQLite, jsonb on PostgreSQL
    assert (json.loads(owners) if isinstance(owners, str) else owners) == ["infra", "infra-lab"]
    created_at, expires_at = (
        datetime.fromisoformat(str(row[c])) for c in ("created_at", "expires_at")
    )
    assert expires_at - created_at == timedelta(days=90)

    assert main(["keys", "list"]) == 0
    header, listed = capsys.readouterr().out.splitlines()
    assert header.split() == [
        *("NAME", "ROLE", "OWNERS", "CREATED", "EXPIRES"),
        *("LAST", "USED", "REVOKED"),
    ]
    name, role, owners, created, expires, last_used, revoked = listed.split()
    assert (name, role, owners, last_used, revoked) == ("team-a", "ci", "infra,infra-lab", "-", "-")
    assert created == created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert expires == expires_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert secret not in listed

    with running_api(migrated_db_url) as api:
        headers = {"Authorization": f"Bearer {secret}"}
        assert api.client.get("/schema/openapi.json", headers=headers).status_code == 200
        assert main(["keys", "revoke", "team-a"]) == 0
        assert "revoked" in capsys.readouterr().out  # the service sees it within 1 s
        wait_until(
            lambda: api.client.get("/schema/openapi.json", headers=headers).status_code == 401,
            "the revoked key to be refused",
            limit=2.0,
        )
    assert main(["keys", "list"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[-1] != "-"

    assert main(["keys", "revoke", "nobody"]) == 2
    assert "nobody" in capsys.readouterr().err
