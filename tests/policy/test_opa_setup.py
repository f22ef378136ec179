"""`supportgate opa setup` (docker-compose's opa-setup): the bundle signing key and the tokens
OPA and the service share, written once and kept on every later start."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import pytest

from supportgate.cli import EXIT_ERROR, EXIT_OK, main
from supportgate.policy.opa_bundle import BundleSigner

pytestmark = pytest.mark.fast

SHARED = ("bundle-verification.pem", "bundle-token", "opa-api-token", "opa-api-token-sha256.json")


def _setup(key: Path, shared: Path) -> int:
    return main(["opa", "setup", "--signing-key", str(key), "--dir", str(shared)])


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_setup_writes_what_is_missing_and_keeps_what_exists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key, shared = tmp_path / "keys" / "bundle-signing.pem", tmp_path / "opa"
    key.parent.mkdir()
    assert _setup(key, shared) == EXIT_OK
    assert capsys.readouterr().out.count("wrote ") == 1 + len(SHARED)
    assert _mode(key) == 0o600
    assert {_mode(shared / name) for name in SHARED[1:]} == {0o600}
    token = (shared / "opa-api-token").read_text()
    # OPA's data holds the token's digest, never the token (every policy reads `data`)
    digest = json.loads((shared / "opa-api-token-sha256.json").read_text())
    assert digest == hashlib.sha256(token.encode()).hexdigest()
    assert "\n" not in token + (shared / "bundle-token").read_text()  # OPA's --set-file
    public = BundleSigner.from_file(key).public_key_pem()
    assert (shared / "bundle-verification.pem").read_bytes() == public
    assert public.startswith(b"-----BEGIN PUBLIC KEY-----")  # PEM, as OPA's `keys` take it

    before = {path: path.read_bytes() for path in [key, *(shared / n for n in SHARED)]}
    assert _setup(key, shared) == EXIT_OK
    assert "wrote" not in capsys.readouterr().out
    assert {path: path.read_bytes() for path in before} == before


def test_an_unwritable_directory_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert _setup(tmp_path / "key.pem", blocked / "opa") == EXIT_ERROR
    assert "--dir" in capsys.readouterr().err
    assert _setup(blocked / "key.pem", tmp_path / "opa") == EXIT_ERROR
    assert "--signing-key" in capsys.readouterr().err
