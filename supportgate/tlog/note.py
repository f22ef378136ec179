"""C2SP signed notes (c2sp.org/signed-note) with Ed25519 keys, in the key encoding of
golang.org/x/mod/sumdb/note, so that Go's `note.Open` reads what we sign and we read what it
signs (the encoding, and where opening is stricter than the spec: docs/ledger.md).
Signatures by other keys (a witness's cosignature) are skipped, as the spec says.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .errors import InvalidKey, InvalidNote, TlogInputError

ED25519: Final = 0x01
"""The signature type byte of Ed25519 in keys and key hashes."""

KEY_HASH_SIZE: Final = 4
ED25519_KEY_SIZE: Final = 32
SIGNATURE_PREFIX: Final = "\N{EM DASH} "
MAX_SIGNATURES: Final = 100
"""More signature lines than this and the note is refused (the spec asks for at least 16)."""

_KEY = re.compile(r"([^+]*)\+([0-9a-f]{8})\+(.*)", re.DOTALL)
_NOT_IN_NAMES = re.compile(r"[\s+\x00-\x1f]")
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f]")


def decode_base64(text: str, *, field: str, error: type[TlogInputError]) -> bytes:
    """Standard base64 (RFC 4648 section 4), and only its canonical spelling: a text that
    decodes but would be encoded otherwise (stray bits, missing padding) is refused, so one
    value has one spelling."""
    try:
        data = base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise error(f"not standard base64: {exc}", field=field) from exc
    if base64.b64encode(data).decode() != text:
        raise error("not canonical base64", field=field)
    return data


def check_name(name: str, *, field: str, error: type[TlogInputError]) -> None:
    if not name:
        raise error("a key name is not empty", field=field)
    bad = _NOT_IN_NAMES.search(name)
    if bad:
        raise error(
            f"a key name has no spaces, plus signs or control characters: {bad[0]!r}", field=field
        )


def key_hash(name: str, public_key: bytes) -> int:
    digest = hashlib.sha256(name.encode() + b"\n" + bytes([ED25519]) + public_key).digest()
    return int.from_bytes(digest[:KEY_HASH_SIZE], "big")


@dataclass(frozen=True, slots=True)
class NoteVerifier:
    name: str
    key_hash: int
    public_key: Ed25519PublicKey

    @classmethod
    def from_key(cls, text: str) -> NoteVerifier:
        """InvalidKey (field `verifier_key`) when malformed, not Ed25519, or its hash wrong."""
        name, declared, public = _read_key(text.strip(), field="verifier_key")
        if key_hash(name, public) != declared:
            raise InvalidKey(
                "the key hash is not the hash of this name and key", field="verifier_key"
            )
        return cls(name, declared, Ed25519PublicKey.from_public_bytes(public))

    def encoded(self) -> str:
        public = base64.b64encode(bytes([ED25519]) + self.public_key.public_bytes_raw()).decode()
        return f"{self.name}+{self.key_hash:08x}+{public}"

    def verifies(self, text: bytes, signature: bytes) -> bool:
        try:
            self.public_key.verify(signature, text)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True, slots=True)
class NoteSigner:
    name: str
    key_hash: int
    private_key: Ed25519PrivateKey

    @classmethod
    def from_key(cls, text: str) -> NoteSigner:
        """InvalidKey (field `signer_key`) when malformed, not Ed25519, or its hash does not
        match the public key derived from it. The message never shows the key."""
        text = text.strip()
        if not text.startswith("PRIVATE+KEY+"):
            raise InvalidKey("a signer key starts with PRIVATE+KEY+", field="signer_key")
        name, declared, seed = _read_key(text.removeprefix("PRIVATE+KEY+"), field="signer_key")
        private = Ed25519PrivateKey.from_private_bytes(seed)
        if key_hash(name, private.public_key().public_bytes_raw()) != declared:
            raise InvalidKey(
                "the key hash is not the hash of this key's public key", field="signer_key"
            )
        return cls(name, declared, private)

    @classmethod
    def generate(cls, name: str) -> NoteSigner:
        check_name(name, field="name", error=InvalidKey)
        private = Ed25519PrivateKey.generate()
        return cls(name, key_hash(name, private.public_key().public_bytes_raw()), private)

    def encoded(self) -> str:
        seed = base64.b64encode(bytes([ED25519]) + self.private_key.private_bytes_raw()).decode()
        return f"PRIVATE+KEY+{self.name}+{self.key_hash:08x}+{seed}"

    def verifier(self) -> NoteVerifier:
        return NoteVerifier(self.name, self.key_hash, self.private_key.public_key())

    def sign(self, text: str) -> str:
        """The signed note: `text`, a blank line, and this key's signature line."""
        data = text.encode("utf-8", "surrogatepass")
        _check_note_text(data, field="text")
        if not data.endswith(b"\n"):
            raise InvalidNote("a note's text ends with a newline", field="text")
        blob = self.key_hash.to_bytes(KEY_HASH_SIZE, "big") + self.private_key.sign(data)
        return f"{text}\n{SIGNATURE_PREFIX}{self.name} {base64.b64encode(blob).decode()}\n"


def _read_key(text: str, *, field: str) -> tuple[str, int, bytes]:
    """`<name>+<8 hex digits>+<base64 of 0x01 and 32 bytes>` -> (name, hash, 32 bytes).
    The name has no plus sign; the base64 may."""
    parts = _KEY.fullmatch(text)
    if not parts:
        raise InvalidKey("a key is <name>+<8 lowercase hex digits>+<base64 key>", field=field)
    name, hash_hex, key_b64 = parts.groups()
    check_name(name, field=field, error=InvalidKey)
    key = decode_base64(key_b64, field=field, error=InvalidKey)
    if key[:1] != bytes([ED25519]):
        raise InvalidKey("not an Ed25519 key (its first byte is not 0x01)", field=field)
    if len(key) != 1 + ED25519_KEY_SIZE:
        raise InvalidKey(
            f"an Ed25519 key has {ED25519_KEY_SIZE} bytes, not {len(key) - 1}", field=field
        )
    return name, int(hash_hex, 16), key[1:]


def _check_note_text(data: bytes, *, field: str) -> None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidNote(
            f"a note is UTF-8: {exc.reason} at byte {exc.start}", field=field
        ) from exc
    bad = _CONTROL.search(text)
    if bad:
        raise InvalidNote(
            f"a note has no control character but newline ({bad[0]!r} at {bad.start()})",
            field=field,
        )


def open_note(message: bytes | str, verifier: NoteVerifier) -> str:
    """The text of a signed note, once its signature by `verifier` holds; InvalidNote
    naming the part that does not (`note`, `signatures[i]`)."""
    # a lone surrogate in a str is kept as bytes, for the UTF-8 check to name it
    data = message.encode("utf-8", "surrogatepass") if isinstance(message, str) else message
    _check_note_text(data, field="note")
    split = data.rfind(b"\n\n")
    if split < 0:
        raise InvalidNote("no blank line before the signatures", field="note")
    text, block = data[: split + 1], data[split + 2 :]
    if not block.endswith(b"\n"):
        raise InvalidNote("a note ends with a signature line and its newline", field="note")
    lines = block.decode().split("\n")[:-1]
    if len(lines) > MAX_SIGNATURES:
        raise InvalidNote(f"more than {MAX_SIGNATURES} signatures", field="note")
    verified = False
    others = []
    for position, line in enumerate(lines):
        field = f"signatures[{position}]"
        name, signed_by, signature = _read_signature_line(line, field=field)
        if (name, signed_by) != (verifier.name, verifier.key_hash):
            others.append(f"{name}+{signed_by:08x}")
            continue  # another key's signature (a witness): not ours to judge
        if not verifier.verifies(text, signature):
            raise InvalidNote(
                f"the signature by {name}+{signed_by:08x} does not verify", field=field
            )
        verified = True
    if not verified:
        found = ", ".join(others)
        raise InvalidNote(
            f"no signature by {verifier.name}+{verifier.key_hash:08x} (signed by: {found})",
            field="note",
        )
    return text.decode()


def _read_signature_line(line: str, *, field: str) -> tuple[str, int, bytes]:
    if not line.startswith(SIGNATURE_PREFIX):
        raise InvalidNote("a signature line starts with an em dash and a space", field=field)
    name, space, encoded = line.removeprefix(SIGNATURE_PREFIX).partition(" ")
    if not space:
        raise InvalidNote("a signature line is '— <name> <base64>'", field=field)
    check_name(name, field=field, error=InvalidNote)
    blob = decode_base64(encoded, field=field, error=InvalidNote)
    if len(blob) <= KEY_HASH_SIZE:
        raise InvalidNote("a signature is a 4-byte key hash and the signature", field=field)
    return name, int.from_bytes(blob[:KEY_HASH_SIZE], "big"), blob[KEY_HASH_SIZE:]
