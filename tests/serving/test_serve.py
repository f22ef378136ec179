"""`supportgate serve` started as an operator would: with no configuration it serves from a
SQLite file in the working directory; `--no-upgrade` refuses an unmigrated database, naming
`supportgate db upgrade`; an unreachable OPA makes it unready and its answers 503."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
from sqlalchemy import text

from supportgate.db import create_db_engine

from ..api_support import example
from ..examples import EXAMPLES
from ..opa import shared_credentials
from ..server import clean_env, run_cli, serving


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_on_a_fresh_directory_uses_a_sqlite_file_there(tmp_path: Path) -> None:
    env = clean_env()
    with serving(tmp_path, env=env, ready_path="/health/ready") as server:
        assert (tmp_path / "supportgate.db").is_file()
        ready = httpx.get(f"{server.url}/health/ready", timeout=10)
        assert ready.status_code == 200
        assert ready.json() == {
            "status": "ok",
            "checks": {"database": "ok", "ledger": "ok", "policy_engine": "ok"},
        }

        # A key made by the CLI in the same directory works: both use the same database.
        made = run_cli(["keys", "create", "--role", "ci", "--name", "ci"], env=env, cwd=tmp_path)
        assert made.returncode == 0, made.stderr
        key = made.stdout.splitlines()[-1]
        response = httpx.post(
            f"{server.url}/v1/evaluations",
            content=(EXAMPLES / "hw-b200-pool.yaml").read_bytes(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/yaml"},
            timeout=30,
        )
        assert response.status_code == 201, response.text
        assert response.json()["verdict"] == "supported"
        assert response.json()["matrix_version"] == "2026.11.1"  # the default matrix
    assert server.stderr.read_text() == ""


def test_serve_no_upgrade_refuses_an_empty_database_naming_the_fix(
    db_url: str, tmp_path: Path
) -> None:
    done = run_cli(
        ["serve", "--no-upgrade", "--port", str(_closed_port())],
        env=clean_env(SUPPORTGATE_DATABASE_URL=db_url),
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "supportgate db upgrade" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_serve_no_upgrade_starts_once_the_database_is_upgraded(db_url: str, tmp_path: Path) -> None:
    env = clean_env(SUPPORTGATE_DATABASE_URL=db_url)
    upgraded = run_cli(["db", "upgrade"], env=env, cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    assert "database schema is at" in upgraded.stdout
    with serving(tmp_path, env=env, args=["--no-upgrade"], ready_path="/health/ready") as server:
        assert httpx.get(f"{server.url}/health/live", timeout=10).status_code == 200


def test_serve_with_an_unreachable_opa_is_unready_and_decides_nothing(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'supportgate.db'}"
    env = clean_env(
        SUPPORTGATE_DATABASE_URL=database,
        SUPPORTGATE_OPA_URL=f"http://127.0.0.1:{_closed_port()}",
        **shared_credentials().env(),
    )
    made = run_cli(["keys", "create", "--role", "ci", "--name", "ci"], env=env, cwd=tmp_path)
    key = made.stdout.splitlines()[-1]
    with serving(tmp_path, env=env) as server:
        ready = httpx.get(f"{server.url}/health/ready", timeout=30)
        assert ready.status_code == 503
        assert ready.json()["checks"]["policy_engine"] != "ok"
        assert ready.json()["checks"]["database"] == "ok"
        response = httpx.post(
            f"{server.url}/v1/evaluations",
            content=json.dumps(example("hw-b200-pool.yaml")).encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            timeout=60,
        )
        assert response.status_code == 503, response.text
        assert "verdict" not in response.json()
    engine = create_db_engine(database)
    try:
        with engine.connect() as connection:
            for table in ("decisions", "manifests"):
                count = connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()  # noqa: S608 - fixed names
                assert count == 0, table
    finally:
        engine.dispose()
