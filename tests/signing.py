"""A checkpoint signing key for tests that run the service on PostgreSQL, which refuses to
start without SUPPORTGATE_SIGNING_KEY_FILE (supportgate/ledger/keys.py). One key for the
whole test session, made on first use in a temporary directory removed at exit; SQLite
tests keep the service's default, the key beside the database file."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Final

from supportgate.config import Settings
from supportgate.ledger.keys import KEY_SETTING, ORIGIN_SETTING, write_signer_key
from supportgate.tlog import NoteSigner, NoteVerifier

TEST_ORIGIN: Final = "supportgate.test/postgres"


@cache
def shared_key_file() -> Path:
    directory = Path(tempfile.mkdtemp(prefix="supportgate-test-key-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    path = directory / "signing.key"
    write_signer_key(path, TEST_ORIGIN)
    return path


def shared_verifier() -> NoteVerifier:
    """The verifier key of shared_key_file()."""
    return NoteSigner.from_key(shared_key_file().read_text()).verifier()


def needs_key_file(database_url: str) -> bool:
    return database_url.startswith("postgres")


def with_test_key(settings: Settings) -> Settings:
    """`settings`, with the test key when their database is PostgreSQL."""
    if not needs_key_file(settings.database_url):
        return settings
    return replace(settings, signing_key_file=shared_key_file(), log_origin=TEST_ORIGIN)


def key_env(database_url: str) -> dict[str, str]:
    """The same as environment variables, for a `supportgate serve` process."""
    if not needs_key_file(database_url):
        return {}
    return {KEY_SETTING: str(shared_key_file()), ORIGIN_SETTING: TEST_ORIGIN}
