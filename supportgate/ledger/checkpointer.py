"""Signing the log's checkpoints (CONTRACT section 6; when and why: docs/ledger.md), once per
tree size (replicas share the database), each appended to the witness file. A head that does
not extend the latest checkpoint is never signed; the refusal is logged."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.config import Settings
from supportgate.db.engine import transaction
from supportgate.errors import SupportgateError
from supportgate.logging import get_logger
from supportgate.tlog import (
    Checkpoint,
    NoteVerifier,
    TlogError,
    TlogInputError,
    sign_checkpoint,
    unverified_checkpoint,
    verify_consistency,
)

from .keys import SigningKey, signing_key
from .log import Head, StoredCheckpoint, latest_checkpoint, read_head, store_checkpoint, tree

log = get_logger(__name__)

BESIDE_THE_DATABASE = (
    "a key kept beside the database protects less than one kept elsewhere: whoever can "
    "rewrite the database can likely read the key and sign the rewritten log. Keep it apart "
    "(SUPPORTGATE_SIGNING_KEY_FILE) and hand out the verifier key"
)


class HeadNotSigned(SupportgateError):
    """The head does not extend the latest signed checkpoint: it is not signed."""


class Checkpointer:
    def __init__(
        self, settings: Settings, sessions: sessionmaker[Session], *, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self._settings = settings
        self._sessions = sessions
        self._clock = clock  # when a checkpoint was signed; the timer waits on real time
        self._key: SigningKey | None = None
        self._lock = threading.Lock()  # one signer at a time: the thread, a sweep, a command
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        with transaction(self._sessions) as session:
            signed_before = latest_checkpoint(session) is not None
        with self._lock:
            self._key = signing_key(self._settings, create=not signed_before)
        _log_key(self._key)
        self.sign_now()
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._run, name="supportgate-checkpointer", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop looking, and sign what arrived since the last look. A command that never
        started the service (`supportgate matrix publish`, `reevaluate`) signs what it
        appended too, when this machine holds the key (it never makes one here); without
        the key, the service's next look or start signs it."""
        if self._thread is not None:
            self._stopping.set()
            self._thread.join()
            self._thread = None
        else:
            try:
                self._signing_key()
            except (SupportgateError, TlogError):
                return
        self._sign_logged("stop")

    def after_sweep(self) -> None:
        """A sweep ended: sign its decisions now (a started service; a command's own sweep
        is signed when the command stops)."""
        if self._thread is not None:
            self._sign_logged("sweep")

    def verifier(self) -> NoteVerifier:
        return self._signing_key().signer.verifier()

    def sign_now(self) -> StoredCheckpoint | None:
        """None when the latest checkpoint covers the head already; HeadNotSigned when the
        head does not extend it."""
        with self._lock:
            signer = self._signing_key().signer
            with transaction(self._sessions) as session:
                head = read_head(session)
                latest = latest_checkpoint(session)
                if latest is not None and _covers(session, latest, head):
                    return None
            note = sign_checkpoint(Checkpoint(signer.name, head.size, head.root), signer)
            signed = StoredCheckpoint(head.size, note, self._clock.now())
            with transaction(self._sessions, write=True) as session:
                stored = store_checkpoint(session, signed)
            if stored and self._settings.checkpoint_witness is not None:
                append_note(self._settings.checkpoint_witness, note)
            return signed  # not logged: routine, up to one every interval while entries arrive

    def _signing_key(self) -> SigningKey:
        """The key read at start; a command that never starts the service reads it here
        (never making one)."""
        if self._key is None:
            self._key = signing_key(self._settings)
        return self._key

    def _run(self) -> None:
        while not self._stopping.wait(self._settings.checkpoint_interval):
            self._sign_logged("interval")

    def _sign_logged(self, reason: str) -> None:
        """sign_now, where a failure is logged rather than raised: the caller (the timer,
        a sweep, the stop) has done its own work, and the next look tries again."""
        try:
            self.sign_now()
        except HeadNotSigned as exc:
            # no traceback: the message is the finding, not a fault of the code
            log.error("checkpoint_refused", reason=reason, error=str(exc))  # noqa: TRY400
        except (SupportgateError, TlogError, DBAPIError, OSError) as exc:
            log.warning("checkpoint_not_signed", reason=reason, error=str(exc).splitlines()[0])


def _covers(session: Session, latest: StoredCheckpoint, head: Head) -> bool:
    """Whether `latest` signs `head` already (True) or `head` extends it (False);
    HeadNotSigned when neither holds."""
    try:
        root = unverified_checkpoint(latest.note).root_hash  # signed here; `audit verify` checks it
        if head.size >= latest.tree_size:
            proof = tree(session, head.size).consistency_proof(latest.tree_size, head.size)
            verify_consistency(latest.tree_size, head.size, proof, root, head.root)
            return head.size == latest.tree_size
    except TlogInputError as exc:
        raise HeadNotSigned(
            f"the head ({head.size} entries) does not extend the checkpoint of "
            f"{latest.tree_size}: {exc}"
        ) from exc
    raise HeadNotSigned(
        f"the head holds {head.size} entries, the latest checkpoint {latest.tree_size}: the "
        "log was cut back behind the service's back"
    )


def _log_key(key: SigningKey) -> None:
    verifier = key.signer.verifier().encoded()
    if key.path is None:
        log.warning("signing_key_in_memory", verifier_key=verifier, note="gone at stop")
    elif key.created or key.beside_database:
        log.warning(
            "signing_key_created" if key.created else "signing_key_beside_database",
            path=str(key.path),
            verifier_key=verifier,
            note=BESIDE_THE_DATABASE,
        )
    else:
        log.info("signing_key_loaded", path=str(key.path), verifier_key=verifier)


def append_note(path: Path, note: str) -> None:
    created = not path.exists()
    with path.open("a", encoding="utf-8") as file:
        file.write(note + "\n")
        file.flush()
        os.fsync(file.fileno())
    if created:  # the new file's directory entry, too
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
