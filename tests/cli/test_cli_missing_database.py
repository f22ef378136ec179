"""The commands that read the database refuse a SQLite file that does not exist, naming its URL
and creating nothing; the commands that set a database up (`db upgrade`, `keys create`) make
it, and `keys create` says where."""

from __future__ import annotations

from pathlib import Path

import pytest

from supportgate.cli import main
from supportgate.policy import PolicyBundle

from ..server import clean_env, run_cli


def _reading_commands(matrix_file: Path) -> list[list[str]]:
    return [["audit", "verify"], ["reevaluate"], ["matrix", "publish", str(matrix_file)]]


# Refused before it would listen; in a subprocess only, as serve configures the process's logging.
SERVE_NO_UPGRADE = ["serve", "--no-upgrade", "--port", "1"]


@pytest.fixture
def in_empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working directory is an empty one and SUPPORTGATE_DATABASE_URL is unset."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SUPPORTGATE_DATABASE_URL", raising=False)
    return tmp_path


@pytest.mark.parametrize("index", range(3), ids=["audit-verify", "reevaluate", "matrix-publish"])
def test_a_reading_command_refuses_a_missing_default_database(
    index: int,
    in_empty_directory: Path,
    policy_bundle: PolicyBundle,
    capsys: pytest.CaptureFixture[str],
) -> None:
    command = _reading_commands(policy_bundle.default_matrix_path)[index]
    assert main(command) == 2
    err = capsys.readouterr().err
    assert f"no database at sqlite:///{in_empty_directory / 'supportgate.db'}:" in err
    assert "supportgate db upgrade" in err
    assert list(in_empty_directory.iterdir()) == []


def test_the_refusal_names_the_configured_url_and_creates_no_directory_entry(
    tmp_path: Path, policy_bundle: PolicyBundle
) -> None:
    database = tmp_path / "data" / "gate.db"
    database.parent.mkdir()
    env = clean_env(SUPPORTGATE_DATABASE_URL=f"sqlite:///{database}")
    for command in [*_reading_commands(policy_bundle.default_matrix_path), SERVE_NO_UPGRADE]:
        done = run_cli(command, env=env, cwd=tmp_path)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert f"supportgate: error: no database at sqlite:///{database}:" in done.stderr
        assert "Traceback" not in done.stderr
        assert list(database.parent.iterdir()) == [], command


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_database_is_refused_even_to_keys_create(
    url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", url)
    for command in (["audit", "verify"], ["keys", "create", "--role", "ci", "--name", "x"]):
        assert main(command) == 2
        captured = capsys.readouterr()
        assert f"supportgate: error: the database {url} is in memory:" in captured.err
        assert "sg_" not in captured.out


def test_once_db_upgrade_made_the_database_the_readers_run(
    in_empty_directory: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "upgrade"]) == 0
    assert (in_empty_directory / "supportgate.db").is_file()
    capsys.readouterr()
    assert main(["audit", "verify"]) == 0
    assert capsys.readouterr().out.startswith("audit log intact: 0 entries, root ")
    assert main(["reevaluate"]) == 0


def test_keys_create_makes_a_missing_database_and_says_where(
    in_empty_directory: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "create", "--role", "admin", "--name", "first"]) == 0
    database = in_empty_directory / "supportgate.db"
    assert database.is_file()
    assert capsys.readouterr().err == f"supportgate: created the database sqlite:///{database}\n"

    assert main(["keys", "create", "--role", "ci", "--name", "second"]) == 0
    assert capsys.readouterr().err == ""  # it exists now: nothing to say
