"""The checkpoint signing key: `supportgate audit keygen`, and where the service finds its key
(SUPPORTGATE_SIGNING_KEY_FILE, else beside the SQLite file; PostgreSQL needs the setting)."""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from supportgate.cli import main
from supportgate.config import Settings
from supportgate.ledger.keys import (
    KEY_FILE_NAME,
    SigningKeyError,
    check_signing_key,
    log_verifier,
    signing_key,
    write_signer_key,
)
from supportgate.tlog import (
    EMPTY_ROOT,
    Checkpoint,
    InvalidKey,
    NoteSigner,
    NoteVerifier,
    open_checkpoint,
    sign_checkpoint,
)

from ..server import run_cli
from ..services import free_port

pytestmark = pytest.mark.fast

ORIGIN = "supportgate.test/keys"
PG_URL = "postgresql://supportgate@127.0.0.1:5432/never-connected"


def settings(tmp_path: Path, **values: object) -> Settings:
    base = Settings(database_url=f"sqlite:///{tmp_path / 'supportgate.db'}", log_origin=ORIGIN)
    return replace(base, **values)  # type: ignore[arg-type]


def test_keygen_writes_a_0600_signer_key_and_prints_its_verifier_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "signing.key"
    assert main(["audit", "keygen", "--origin", ORIGIN, "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    verifier = NoteVerifier.from_key(printed[-1])
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    signer = NoteSigner.from_key(out.read_text())
    assert out.read_text().startswith(f"PRIVATE+KEY+{ORIGIN}+")
    assert (signer.name, verifier.encoded()) == (ORIGIN, signer.verifier().encoded())
    note = sign_checkpoint(Checkpoint(ORIGIN, 0, EMPTY_ROOT), signer)
    assert open_checkpoint(note, verifier).tree_size == 0


def test_keygen_never_overwrites_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "signing.key"
    out.write_text("the old key\n")
    assert main(["audit", "keygen", "--origin", ORIGIN, "--out", str(out)]) == 2
    assert "exists: a signing key is never overwritten" in capsys.readouterr().err
    assert out.read_text() == "the old key\n"


def test_keygen_refuses_an_origin_that_cannot_name_a_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "signing.key"
    assert main(["audit", "keygen", "--origin", "two words", "--out", str(out)]) == 2
    assert "origin: a key name has no spaces" in capsys.readouterr().err
    assert not out.exists()


def test_the_default_key_is_made_beside_the_sqlite_file_only_when_asked(tmp_path: Path) -> None:
    configured = settings(tmp_path)
    assert log_verifier(configured) is None  # `audit verify` without a key: nothing to check
    with pytest.raises(SigningKeyError, match="beside the SQLite database\\) is missing"):
        signing_key(configured)
    check_signing_key(configured)  # `serve` lets the start make it
    made = signing_key(configured, create=True)
    path = tmp_path / KEY_FILE_NAME
    assert (made.path, made.beside_database, made.created) == (path, True, True)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = signing_key(configured, create=True)
    assert not again.created
    assert again.signer.encoded() == made.signer.encoded()
    verifier = log_verifier(configured)
    assert verifier is not None
    assert verifier.encoded() == made.signer.verifier().encoded()


def test_a_configured_key_file_is_read_and_never_made(tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.key"
    configured = settings(tmp_path, signing_key_file=path)
    with pytest.raises(SigningKeyError, match=r"no such file.*audit keygen --origin"):
        signing_key(configured, create=True)
    with pytest.raises(SigningKeyError, match="no such file"):
        check_signing_key(configured)
    with pytest.raises(SigningKeyError, match="no such file"):
        log_verifier(configured)
    verifier = write_signer_key(path, ORIGIN)
    found = signing_key(configured)
    assert (found.path, found.beside_database, found.created) == (path, False, False)
    assert found.signer.verifier().encoded() == verifier.encoded()
    assert not (tmp_path / KEY_FILE_NAME).exists()


def test_postgresql_without_a_key_file_is_refused_naming_the_setting(tmp_path: Path) -> None:
    configured = settings(tmp_path, database_url=PG_URL)
    for attempt in (
        lambda: signing_key(configured, create=True),
        lambda: check_signing_key(configured),
    ):
        with pytest.raises(SigningKeyError) as refused:
            attempt()
        assert "SUPPORTGATE_SIGNING_KEY_FILE: not set" in str(refused.value)
        assert f"supportgate audit keygen --origin {ORIGIN} --out FILE" in str(refused.value)
    assert log_verifier(configured) is None
    path = tmp_path / "pg.key"
    write_signer_key(path, ORIGIN)
    assert signing_key(replace(configured, signing_key_file=path)).path == path


def test_a_key_of_another_name_is_refused_naming_both(tmp_path: Path) -> None:
    path = tmp_path / "other.key"
    write_signer_key(path, "supportgate/another-host")
    configured = settings(tmp_path, signing_key_file=path)
    for attempt in (lambda: signing_key(configured), lambda: check_signing_key(configured)):
        with pytest.raises(SigningKeyError) as refused:
            attempt()
        message = str(refused.value)
        assert "'supportgate/another-host'" in message
        assert f"'{ORIGIN}'" in message
        assert "SUPPORTGATE_LOG_ORIGIN=supportgate/another-host" in message
    verifier = log_verifier(configured)  # what `audit verify` reads: the key as it is
    assert verifier is not None
    assert verifier.name == "supportgate/another-host"


def test_a_file_that_is_not_a_key_is_refused_without_showing_it(tmp_path: Path) -> None:
    path = tmp_path / "broken.key"
    path.write_text("PRIVATE+KEY+supportgate.test/keys+00000000+c2VjcmV0\n")
    with pytest.raises(SigningKeyError, match="is not a note signer key") as refused:
        signing_key(settings(tmp_path, signing_key_file=path))
    assert "c2VjcmV0" not in str(refused.value)


def test_an_origin_that_cannot_name_a_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidKey, match="SUPPORTGATE_LOG_ORIGIN: a key name has no spaces"):
        signing_key(settings(tmp_path, log_origin="two words"), create=True)


def test_an_in_memory_database_gets_a_key_in_memory(tmp_path: Path) -> None:
    found = signing_key(settings(tmp_path, database_url="sqlite://"), create=True)
    assert (found.path, found.signer.name) == (None, ORIGIN)
    assert list(tmp_path.iterdir()) == []


def test_the_origin_defaults_to_supportgate_and_the_hostname(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("platform.node", lambda: "build-host-1")
    assert Settings.from_env({}).log_origin == "supportgate/build-host-1"
    assert Settings().log_origin == "supportgate/build-host-1"
    env = {
        "SUPPORTGATE_LOG_ORIGIN": "example.com/log",
        "SUPPORTGATE_SIGNING_KEY_FILE": "/keys/signing.key",
        "SUPPORTGATE_CHECKPOINT_WITNESS": "/witness/checkpoints",
    }
    read = Settings.from_env(env)
    assert read.log_origin == "example.com/log"
    assert read.signing_key_file == Path("/keys/signing.key")
    assert read.checkpoint_witness == Path("/witness/checkpoints")
    assert (Settings().signing_key_file, Settings().checkpoint_witness) == (None, None)


def test_serve_refuses_postgresql_without_a_key_before_it_listens(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SUPPORTGATE_")}
    env["SUPPORTGATE_DATABASE_URL"] = PG_URL  # never connected: the key is checked first
    result = run_cli(["serve", "--port", str(free_port())], env=env, cwd=tmp_path, timeout=60)
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("supportgate: error: SUPPORTGATE_SIGNING_KEY_FILE: not set")
