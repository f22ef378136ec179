"""The key that signs the log's checkpoints: where it is kept, how it is made and read, and
why PostgreSQL has no default (docs/ledger.md, "Which key"). A key file is written 0600 and
never over an existing file: the checkpoints a key signed verify only with it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from supportgate.config import Settings
from supportgate.db.engine import absent_sqlite_database, database_url
from supportgate.errors import UsageError
from supportgate.tlog import InvalidKey, NoteSigner, NoteVerifier, check_name

KEY_FILE_NAME: Final = "supportgate-signing.key"
KEY_FILE_MODE: Final = 0o600
KEY_SETTING: Final = "SUPPORTGATE_SIGNING_KEY_FILE"
ORIGIN_SETTING: Final = "SUPPORTGATE_LOG_ORIGIN"


class SigningKeyError(UsageError):
    """The signing key cannot be had as configured; the message names the setting and the fix."""


@dataclass(frozen=True, slots=True)
class SigningKey:
    signer: NoteSigner
    path: Path | None
    """The key file; None for the in-memory key of an in-memory database."""
    beside_database: bool
    """The default file beside the SQLite database (no SUPPORTGATE_SIGNING_KEY_FILE)."""
    created: bool
    """Made just now, on this start."""


def signing_key(settings: Settings, *, create: bool = False) -> SigningKey:
    """`create`: make the default key beside the SQLite file when it is missing (the
    service's start does, when no checkpoint is signed yet); otherwise a missing file is
    refused."""
    origin = settings.log_origin
    check_name(origin, field=ORIGIN_SETTING, error=InvalidKey)
    path, beside = _key_path(settings)
    if path is None:
        return SigningKey(NoteSigner.generate(origin), None, beside_database=False, created=False)
    created = False
    if not path.exists():
        if not beside:
            raise SigningKeyError(
                f"no such file {path}. Make a key there with "
                f"`supportgate audit keygen --origin {origin} --out {path}`",
                field=KEY_SETTING,
            )
        if not create:
            raise SigningKeyError(
                f"the signing key {path} (the default, beside the SQLite database) is missing. "
                "The service makes it on its first start; if it signed checkpoints before, "
                f"restore that file or set {KEY_SETTING} to it: a new key would not verify them",
                field=KEY_SETTING,
            )
        write_signer_key(path, origin, field=KEY_SETTING)
        created = True
    signer = read_signer_key(path)
    if signer.name != origin:
        raise SigningKeyError(
            f"the signing key {path} is named {signer.name!r}, but the log's origin is "
            f"{origin!r} ({ORIGIN_SETTING}): set {ORIGIN_SETTING}={signer.name}, or give "
            f"{KEY_SETTING} a key made with `supportgate audit keygen --origin {origin}`",
            field=KEY_SETTING,
        )
    return SigningKey(signer, path, beside_database=beside, created=created)


def check_signing_key(settings: Settings) -> None:
    """Raise what the service's start would about its key, making nothing: a default key
    beside the SQLite file may be missing (the start makes it). For `serve`, to refuse in
    one line before it listens."""
    path, beside = _key_path(settings)
    if path is None or (beside and not path.exists()):
        check_name(settings.log_origin, field=ORIGIN_SETTING, error=InvalidKey)
        return
    signing_key(settings)


def log_verifier(settings: Settings) -> NoteVerifier | None:
    """The verifier key, when this machine holds the signing key (never making one). Its
    name is not held to SUPPORTGATE_LOG_ORIGIN here: opening a checkpoint holds its origin
    to the key's name."""
    try:
        path, beside = _key_path(settings)
    except SigningKeyError:
        return None
    if path is None or (beside and not path.exists()):
        return None
    if not path.exists():
        raise SigningKeyError(f"no such file {path}", field=KEY_SETTING)
    return read_signer_key(path).verifier()


def write_signer_key(path: Path, origin: str, *, field: str = "--out") -> NoteVerifier:
    """`field` names where the path came from (keygen's `--out`, or the service's setting)."""
    check_name(origin, field="origin", error=InvalidKey)
    signer = NoteSigner.generate(origin)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, KEY_FILE_MODE)
    except FileExistsError as exc:
        raise SigningKeyError(
            f"{path} exists: a signing key is never overwritten (the checkpoints it signed "
            "verify only with it); choose another file",
            field=field,
        ) from exc
    except OSError as exc:
        raise SigningKeyError(
            f"cannot create the key file {path}: {exc.strerror}", field=field
        ) from exc
    with os.fdopen(descriptor, "w", encoding="ascii") as file:
        os.fchmod(descriptor, KEY_FILE_MODE)  # exactly 0600, whatever the umask
        file.write(signer.encoded() + "\n")
        file.flush()
        os.fsync(descriptor)
    return signer.verifier()


def read_signer_key(path: Path) -> NoteSigner:
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise SigningKeyError(
            f"cannot read the signing key {path}: {exc}", field=KEY_SETTING
        ) from exc
    try:
        return NoteSigner.from_key(text)
    except InvalidKey as exc:
        raise SigningKeyError(
            f"the signing key {path} is not a note signer key: {exc.message}", field=KEY_SETTING
        ) from exc


def _key_path(settings: Settings) -> tuple[Path | None, bool]:
    """(the key file, whether it is the default beside the SQLite file); (None, False) for
    the in-memory key of an in-memory database."""
    if settings.signing_key_file is not None:
        return settings.signing_key_file, False
    url = database_url(settings.database_url)
    database = url.database or ""
    if url.get_backend_name() == "sqlite" and not database.startswith("file:"):
        absent = absent_sqlite_database(settings.database_url)
        if absent is not None and absent.in_memory:
            return None, False
        return Path(database).parent / KEY_FILE_NAME, True
    raise SigningKeyError(
        f"not set, and on {url.get_backend_name()} there is no database file to keep a "
        "signing key beside. Make one where the database's owner cannot write, with "
        f"`supportgate audit keygen --origin {settings.log_origin} --out FILE`, and set "
        f"{KEY_SETTING}=FILE",
        field=KEY_SETTING,
    )
