"""The checkpointer on SQLite and PostgreSQL: it signs the head at start when the head is ahead
(a migrated log), while entries arrive (every interval, shortened here), at stop and after a
sweep; it stores each size once and appends each to the witness file; it never signs a head
that does not extend the latest checkpoint."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.audit.checkpoints import witness_notes
from supportgate.config import Settings
from supportgate.db import LedgerCheckpoint, create_db_engine, session_factory, transaction
from supportgate.db.migrate import upgrade
from supportgate.ledger.checkpointer import Checkpointer, HeadNotSigned
from supportgate.ledger.entries import untracked_entry
from supportgate.ledger.keys import KEY_FILE_NAME, SigningKeyError, write_signer_key
from supportgate.ledger.log import (
    StoredCheckpoint,
    append_entries,
    latest_checkpoint,
    lock_head,
    read_head,
    store_checkpoint,
    tree,
)
from supportgate.tlog import NoteSigner, open_checkpoint

from ..waiting import wait_until

ORIGIN = "supportgate.test/checkpointer"
AT = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
NEVER = 3600.0  # an interval no test waits for: what is signed, something else signed


@pytest.fixture
def settings(migrated_db_url: str, tmp_path: Path) -> Settings:
    key = tmp_path / "keys" / "signing.key"
    key.parent.mkdir()
    write_signer_key(key, ORIGIN)
    return Settings(
        database_url=migrated_db_url,
        signing_key_file=key,
        log_origin=ORIGIN,
        checkpoint_witness=tmp_path / "witness",
        checkpoint_interval=NEVER,
    )


@pytest.fixture
def started(settings: Settings, sessions: sessionmaker[Session]) -> Iterator[Checkpointer]:
    checkpointer = Checkpointer(settings, sessions)
    checkpointer.start()
    try:
        yield checkpointer
    finally:
        checkpointer.stop()


def append(sessions: sessionmaker[Session], count: int) -> int:
    """Append `count` entries; the head's new size."""
    entries = [
        untracked_entry(kind="HardwareManifest", name=f"pool-{i}", untracked_by="test", at=AT)
        for i in range(count)
    ]
    with transaction(sessions, write=True) as session:
        return append_entries(session, lock_head(session), entries).size


def latest(sessions: sessionmaker[Session]) -> StoredCheckpoint:
    with transaction(sessions) as session:
        found = latest_checkpoint(session)
    assert found is not None
    return found


def stored_count(sessions: sessionmaker[Session]) -> int:
    with transaction(sessions) as session:
        return int(session.execute(select(func.count()).select_from(LedgerCheckpoint)).scalar_one())


def witnessed(settings: Settings) -> list[str]:
    assert settings.checkpoint_witness is not None
    return [note.text for note in witness_notes(settings.checkpoint_witness)]


def test_start_signs_the_head_of_a_log_no_checkpoint_covers(
    settings: Settings, sessions: sessionmaker[Session]
) -> None:
    size = append(sessions, 5)  # a migrated database: entries, no checkpoint
    checkpointer = Checkpointer(settings, sessions)
    checkpointer.start()
    checkpointer.stop()
    signed = latest(sessions)
    checkpoint = open_checkpoint(signed.note, checkpointer.verifier())
    with transaction(sessions) as session:
        head = read_head(session)
    assert (checkpoint.origin, checkpoint.tree_size, checkpoint.root_hash) == (
        ORIGIN,
        size,
        head.root,
    )
    assert witnessed(settings) == [signed.note]
    assert stored_count(sessions) == 1  # the stop had nothing new to sign


def test_nothing_new_is_not_signed_again(
    started: Checkpointer, sessions: sessionmaker[Session], settings: Settings
) -> None:
    assert started.sign_now() is None
    assert stored_count(sessions) == 1
    size = append(sessions, 2)
    signed = started.sign_now()
    assert signed is not None
    assert signed.tree_size == size
    assert started.sign_now() is None
    assert [
        open_checkpoint(note, started.verifier()).tree_size for note in witnessed(settings)
    ] == [
        0,
        size,
    ]


def test_entries_are_signed_within_the_interval(
    settings: Settings, sessions: sessionmaker[Session]
) -> None:
    checkpointer = Checkpointer(replace(settings, checkpoint_interval=0.05), sessions)
    checkpointer.start()
    try:
        for _ in range(3):
            size = append(sessions, 4)

            def signed(size: int = size) -> bool:
                return latest(sessions).tree_size == size

            wait_until(signed, f"a checkpoint of {size}")
    finally:
        checkpointer.stop()
    assert [open_checkpoint(n, checkpointer.verifier()).tree_size for n in witnessed(settings)] == [
        0,
        4,
        8,
        12,
    ]


def test_stop_and_a_sweep_sign_what_arrived(
    settings: Settings, sessions: sessionmaker[Session]
) -> None:
    checkpointer = Checkpointer(settings, sessions)
    checkpointer.after_sweep()  # not started (a command's runtime): signs nothing
    assert stored_count(sessions) == 0
    checkpointer.start()
    append(sessions, 3)
    checkpointer.after_sweep()
    assert latest(sessions).tree_size == 3
    append(sessions, 2)
    checkpointer.stop()
    assert latest(sessions).tree_size == 5
    assert stored_count(sessions) == 3  # 0 at start, 3 after the sweep, 5 at stop


def test_a_command_that_never_started_signs_at_its_stop(
    settings: Settings, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    """`supportgate matrix publish` and the like: a Runtime built, used and stopped."""
    size = append(sessions, 2)
    Checkpointer(settings, sessions).stop()
    assert latest(sessions).tree_size == size
    append(sessions, 1)
    without_key = replace(settings, signing_key_file=tmp_path / "absent.key")
    Checkpointer(without_key, sessions).stop()  # no key here: the service signs it later
    assert latest(sessions).tree_size == size


def test_a_size_is_stored_once(sessions: sessionmaker[Session]) -> None:
    """Two replicas signing one size: the second stores nothing (ON CONFLICT DO NOTHING)."""
    first = StoredCheckpoint(0, "the note\n", AT)
    with transaction(sessions, write=True) as session:
        assert store_checkpoint(session, first) is True
    with transaction(sessions, write=True) as session:
        assert store_checkpoint(session, replace(first, note="another\n")) is False
    assert latest(sessions) == first


def test_a_replica_does_not_sign_what_another_signed(
    started: Checkpointer, settings: Settings, sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    other = Checkpointer(replace(settings, checkpoint_witness=tmp_path / "other"), sessions)
    append(sessions, 2)
    assert started.sign_now() is not None
    assert other.sign_now() is None
    assert not (tmp_path / "other").exists()


def test_a_head_cut_back_is_not_signed(
    started: Checkpointer, sessions: sessionmaker[Session]
) -> None:
    append(sessions, 5)
    started.sign_now()
    with transaction(sessions) as session:
        root_of_3 = tree(session, 5).root(3)
    sql(sessions, "UPDATE ledger_head SET size = 3, root = :root", root=root_of_3)
    with pytest.raises(HeadNotSigned, match="holds 3 entries, the latest checkpoint 5"):
        started.sign_now()
    started.after_sweep()  # logged, not raised
    assert latest(sessions).tree_size == 5


@pytest.mark.parametrize("grown", [0, 2])
def test_a_rewritten_head_is_not_signed(
    started: Checkpointer, sessions: sessionmaker[Session], grown: int
) -> None:
    append(sessions, 5)
    started.sign_now()
    size = append(sessions, grown) if grown else 5
    sql(sessions, "UPDATE ledger_head SET root = :root", root=b"\x01" * 32)
    with pytest.raises(HeadNotSigned, match=f"the head \\({size} entries\\) does not extend"):
        started.sign_now()
    assert latest(sessions).tree_size == 5


@pytest.mark.fast
def test_the_default_key_is_made_only_before_the_first_checkpoint(tmp_path: Path) -> None:
    """Beside the SQLite file (no SUPPORTGATE_SIGNING_KEY_FILE): made at the first start; once
    checkpoints are signed, a missing key is refused rather than replaced."""
    url = f"sqlite:///{tmp_path / 'supportgate.db'}"
    upgrade(url)
    beside = Settings(database_url=url, log_origin=ORIGIN, checkpoint_interval=NEVER)
    db = create_db_engine(url)
    try:
        checkpointer = Checkpointer(beside, session_factory(db))
        checkpointer.start()
        checkpointer.stop()
        key = tmp_path / KEY_FILE_NAME
        assert NoteSigner.from_key(key.read_text()).name == ORIGIN
        key.unlink()
        with pytest.raises(SigningKeyError, match="restore that file"):
            Checkpointer(beside, session_factory(db)).start()
        assert not key.exists()
    finally:
        db.dispose()


def test_the_verifier_key_is_the_signing_keys(started: Checkpointer, settings: Settings) -> None:
    assert settings.signing_key_file is not None
    signer = NoteSigner.from_key(settings.signing_key_file.read_text())
    assert started.verifier().encoded() == signer.verifier().encoded()


def sql(sessions: sessionmaker[Session], statement: str, **params: object) -> None:
    with transaction(sessions, write=True) as session:
        session.execute(text(statement), params)
