"""supportgate.tlog.note: keys and signed notes in the encoding of golang.org/x/mod/sumdb/note.

The known answers were made once with Go's `note.GenerateKey` over the seed 00 01 .. 1f and
`note.Sign` of the checkpoint below (Ed25519 signatures are deterministic), so these tests
hold our encoding to Go's byte for byte; tests/tlog/test_go_verifier.py checks fresh keys
and notes with Go itself.
"""

from __future__ import annotations

import base64
import re

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from supportgate.tlog import (
    InvalidKey,
    InvalidNote,
    NoteSigner,
    NoteVerifier,
    open_note,
)
from supportgate.tlog.note import key_hash

pytestmark = pytest.mark.fast

NAME = "example.com/supportgate-kat"
SEED = bytes(range(32))
SIGNER_KEY = f"PRIVATE+KEY+{NAME}+0ee2cb20+AQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f"
VERIFIER_KEY = f"{NAME}+0ee2cb20+AQOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4"
TEXT = f"{NAME}\n3\nNmQuc8JUCrEh46a/lUWwokmCzYMOsT080Z3jzmwCHsE=\n"
SIGNATURE = (
    "DuLLIFOJSI1B1uPN/LGYYz2c+YtDp5HMQYv2YxY/gSyWEQNWuf5zXfWDX2GznZ1lH21/+kcYZz/o3NHWZpzZ7AEcEgo="
)
SIGNED = f"{TEXT}\n\N{EM DASH} {NAME} {SIGNATURE}\n"


def _signer(seed: bytes, name: str = NAME) -> NoteSigner:
    private = Ed25519PrivateKey.from_private_bytes(seed)
    return NoteSigner(name, key_hash(name, private.public_key().public_bytes_raw()), private)


# -- known answers --------------------------------------------------------------------------


def test_keys_are_encoded_as_go_encodes_them() -> None:
    signer = _signer(SEED)
    assert signer.key_hash == 0x0EE2CB20
    assert signer.encoded() == SIGNER_KEY
    assert signer.verifier().encoded() == VERIFIER_KEY
    assert NoteSigner.from_key(SIGNER_KEY).encoded() == SIGNER_KEY
    assert NoteVerifier.from_key(VERIFIER_KEY + "\n").encoded() == VERIFIER_KEY


def test_a_note_is_signed_as_go_signs_it() -> None:
    assert NoteSigner.from_key(SIGNER_KEY).sign(TEXT) == SIGNED
    assert open_note(SIGNED, NoteVerifier.from_key(VERIFIER_KEY)) == TEXT
    assert open_note(SIGNED.encode(), NoteVerifier.from_key(VERIFIER_KEY)) == TEXT


@given(st.binary(min_size=32, max_size=32), st.sampled_from(["log.example/a", "x", "b/c-d_é"]))
def test_keys_read_back_as_written(seed: bytes, name: str) -> None:
    signer = _signer(seed, name)
    again = NoteSigner.from_key(signer.encoded())
    assert (again.name, again.key_hash, again.encoded()) == (
        name,
        signer.key_hash,
        signer.encoded(),
    )
    verifier = NoteVerifier.from_key(signer.verifier().encoded())
    assert open_note(again.sign("a text\n\nwith a blank line\n"), verifier).startswith("a text")


def test_a_key_with_a_plus_sign_in_its_base64_reads_back() -> None:
    """A name has no '+', but base64 does: the key is cut at the first two plus signs only."""
    seed = next(
        bytes([i]) * 32
        for i in range(256)
        if "+" in _signer(bytes([i]) * 32).verifier().encoded().split("+", 2)[2]
    )
    signer = _signer(seed)
    assert NoteVerifier.from_key(signer.verifier().encoded()) == signer.verifier()
    assert NoteSigner.from_key(signer.encoded()).encoded() == signer.encoded()


def test_generated_keys_sign_and_verify() -> None:
    signer = NoteSigner.generate("log.example/fresh")
    signer_key, verifier_key = signer.encoded(), signer.verifier().encoded()
    assert signer_key.startswith("PRIVATE+KEY+log.example/fresh+")
    assert verifier_key.split("+")[:2] == signer_key.split("+")[2:4]
    note = NoteSigner.from_key(signer_key).sign("hello\n")
    assert open_note(note, NoteVerifier.from_key(verifier_key)) == "hello\n"
    assert NoteSigner.generate("log.example/fresh").encoded() != signer_key


# -- malformed keys -------------------------------------------------------------------------

_OTHER = _signer(bytes(32)).verifier().encoded().split("+")[1]  # another key's hash


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (VERIFIER_KEY.replace("0ee2cb20", _OTHER), "the key hash is not the hash"),
        (VERIFIER_KEY.replace(NAME, "example.com/other"), "the key hash is not the hash"),
        (VERIFIER_KEY.replace("0ee2cb20", "0EE2CB20"), "8 lowercase hex digits"),
        (VERIFIER_KEY.replace("0ee2cb20", "0ee2cb2"), "8 lowercase hex digits"),
        (VERIFIER_KEY.replace("+AQ", "+Ag"), "not an Ed25519 key"),
        (VERIFIER_KEY[:-1], "not standard base64"),
        (VERIFIER_KEY[:-8] + "AAAA", "an Ed25519 key has 32 bytes, not 29"),
        (VERIFIER_KEY.replace(NAME, "example.com/a b"), "no spaces"),
        (VERIFIER_KEY.replace(NAME, "example.com/a\N{NO-BREAK SPACE}b"), "no spaces"),
        (VERIFIER_KEY.replace(NAME, "example.com/a\x1fb"), "no spaces"),
        (VERIFIER_KEY.replace(NAME, ""), "not empty"),
        (NAME, "a key is <name>"),
        (SIGNER_KEY, "a key is <name>"),
    ],
)
def test_a_malformed_verifier_key_is_refused(key: str, message: str) -> None:
    with pytest.raises(InvalidKey, match=re.escape(message)) as caught:
        NoteVerifier.from_key(key)
    assert caught.value.field == "verifier_key"


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (VERIFIER_KEY, "starts with PRIVATE+KEY+"),
        (SIGNER_KEY.replace("0ee2cb20", _OTHER), "not the hash of this key's public key"),
        (SIGNER_KEY.replace("+AQAB", "+AgAB"), "not an Ed25519 key"),
        (SIGNER_KEY.replace(NAME, "a+b"), "a key is <name>"),
    ],
)
def test_a_malformed_signer_key_is_refused_without_showing_it(key: str, message: str) -> None:
    with pytest.raises(InvalidKey, match=re.escape(message)) as caught:
        NoteSigner.from_key(key)
    assert caught.value.field == "signer_key"
    assert key.rsplit("+", 1)[1] not in str(caught.value)


def test_a_key_for_a_bad_name_is_not_generated() -> None:
    with pytest.raises(InvalidKey, match="no spaces") as caught:
        NoteSigner.generate("my log")
    assert caught.value.field == "name"


# -- opening notes --------------------------------------------------------------------------

VERIFIER = NoteVerifier.from_key(VERIFIER_KEY)
_SIGNATURE_LINE = f"\N{EM DASH} {NAME} {SIGNATURE}\n"
_OTHER_SIGNER = _signer(bytes([7]) * 32, "witness.example/w1")
_OTHER_LINE = _OTHER_SIGNER.sign(TEXT).removeprefix(TEXT + "\n")


def _flip_signature_byte(line: str, at: int) -> str:
    blob = bytearray(base64.b64decode(line.split(" ")[2]))
    blob[at] ^= 1
    return f"\N{EM DASH} {NAME} {base64.b64encode(blob).decode()}\n"


def test_a_witness_cosignature_is_skipped_and_ours_still_counts() -> None:
    assert open_note(f"{TEXT}\n{_OTHER_LINE}{_SIGNATURE_LINE}", VERIFIER) == TEXT
    assert open_note(f"{TEXT}\n{_SIGNATURE_LINE}{_SIGNATURE_LINE}", VERIFIER) == TEXT


@pytest.mark.parametrize(
    ("note", "field", "message"),
    [
        # tampering
        (SIGNED.replace("\n3\n", "\n4\n"), "signatures[0]", "does not verify"),
        (
            f"{TEXT}\n{_flip_signature_byte(_SIGNATURE_LINE, 10)}",
            "signatures[0]",
            "does not verify",
        ),
        (
            f"{TEXT}\n{_OTHER_LINE}{_flip_signature_byte(_SIGNATURE_LINE, 10)}",
            "signatures[1]",
            "does not verify",
        ),
        # another key: its name and hash do not match ours, so the note has no signature of ours
        (f"{TEXT}\n{_OTHER_LINE}", "note", "no signature by example.com/supportgate-kat+0ee2cb20"),
        (
            f"{TEXT}\n{_flip_signature_byte(_SIGNATURE_LINE, 0)}",
            "note",
            "signed by: example.com/supportgate-kat+0fe2cb20",
        ),
        # malformed
        (TEXT + _SIGNATURE_LINE, "note", "no blank line"),
        (SIGNED.removesuffix("\n"), "note", "ends with a signature line"),
        (SIGNED + "\n", "note", "ends with a signature line"),
        (SIGNED + "trailing words\n", "signatures[1]", "starts with an em dash"),
        (SIGNED.replace("\N{EM DASH} ", "-- "), "signatures[0]", "starts with an em dash"),
        (
            SIGNED.replace(f"{NAME} ", f"{NAME}\N{NO-BREAK SPACE}"),
            "signatures[0]",
            "'— <name> <base64>'",
        ),
        (SIGNED.replace(SIGNATURE, SIGNATURE[:-1]), "signatures[0]", "not standard base64"),
        (
            SIGNED.replace(SIGNATURE, "AAAAAA=="),
            "signatures[0]",
            "a 4-byte key hash and the signature",
        ),
        (SIGNED.replace("\n3\n", "\n3\r\n"), "note", "no control character but newline ('\\r' at"),
        (SIGNED.replace("\n3\n", "\n\t3\n"), "note", "no control character"),
        (TEXT + "\n" + _OTHER_LINE * 101, "note", "more than 100 signatures"),
    ],
)
def test_a_note_that_does_not_hold_is_refused(note: str, field: str, message: str) -> None:
    with pytest.raises(InvalidNote, match=re.escape(message)) as caught:
        open_note(note, VERIFIER)
    assert caught.value.field == field


def test_a_note_that_is_not_utf8_is_refused() -> None:
    with pytest.raises(InvalidNote, match="a note is UTF-8") as caught:
        open_note(SIGNED.encode().replace(b"\n3\n", b"\n\xff\n"), VERIFIER)
    assert caught.value.field == "note"
    with pytest.raises(InvalidNote, match="a note is UTF-8"):
        open_note(SIGNED.replace("\n3\n", "\n\ud800\n"), VERIFIER)


def test_a_note_signed_by_another_key_of_the_same_name_is_refused() -> None:
    impostor = _signer(bytes([9]) * 32)
    with pytest.raises(InvalidNote, match="no signature by") as caught:
        open_note(impostor.sign(TEXT), VERIFIER)
    assert caught.value.field == "note"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no newline", "ends with a newline"),
        ("a\x00b\n", "no control character"),
        ("a\udfffb\n", "a note is UTF-8"),
    ],
)
def test_only_a_text_that_makes_a_note_is_signed(text: str, message: str) -> None:
    with pytest.raises(InvalidNote, match=message) as caught:
        NoteSigner.from_key(SIGNER_KEY).sign(text)
    assert caught.value.field == "text"
