"""supportgate.tlog.checkpoint: c2sp.org/tlog-checkpoint bodies, signed and opened."""

from __future__ import annotations

import re

import pytest

from supportgate.tlog import (
    EMPTY_ROOT,
    Checkpoint,
    InvalidNote,
    NoteSigner,
    NoteVerifier,
    open_checkpoint,
    sign_checkpoint,
)
from tests.tlog import rfc9162

from .test_note import NAME, SIGNED, SIGNER_KEY, TEXT, VERIFIER_KEY

pytestmark = pytest.mark.fast

ROOT_ABC = rfc9162.mth([b"a", b"b", b"c"])


def test_the_body_is_origin_size_and_base64_root() -> None:
    assert Checkpoint("log.example/x", 0, EMPTY_ROOT).body() == (
        "log.example/x\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"
    )
    assert Checkpoint(NAME, 3, ROOT_ABC).body() == TEXT


def test_a_checkpoint_is_signed_as_go_signs_it_and_opens_again() -> None:
    checkpoint = Checkpoint(NAME, 3, ROOT_ABC)
    assert sign_checkpoint(checkpoint, NoteSigner.from_key(SIGNER_KEY)) == SIGNED
    assert open_checkpoint(SIGNED, NoteVerifier.from_key(VERIFIER_KEY)) == checkpoint


def test_fresh_keys_round_trip_a_large_checkpoint() -> None:
    signer = NoteSigner.generate("log.example/big")
    checkpoint = Checkpoint("log.example/big", 2**63 + 5, ROOT_ABC)
    note = sign_checkpoint(checkpoint, NoteSigner.from_key(signer.encoded()))
    assert open_checkpoint(note, NoteVerifier.from_key(signer.verifier().encoded())) == checkpoint


def test_an_edited_checkpoint_no_longer_verifies() -> None:
    verifier = NoteVerifier.from_key(VERIFIER_KEY)
    for edited in [
        SIGNED.replace("\n3\n", "\n4\n"),
        SIGNED.replace("NmQuc8", "NmQuc9"),
        SIGNED.replace(NAME + "\n", "example.com/supportgate-kau\n", 1),
    ]:
        with pytest.raises(InvalidNote, match="does not verify") as caught:
            open_checkpoint(edited, verifier)
        assert caught.value.field == "signatures[0]"


def test_a_key_signs_only_the_checkpoints_of_its_own_origin() -> None:
    signer = NoteSigner.from_key(SIGNER_KEY)
    with pytest.raises(
        InvalidNote, match=re.escape("the log's origin is 'other.example/log'")
    ) as caught:
        sign_checkpoint(Checkpoint("other.example/log", 3, ROOT_ABC), signer)
    assert caught.value.field == "origin"
    foreign = signer.sign(Checkpoint("other.example/log", 3, ROOT_ABC).body())
    with pytest.raises(
        InvalidNote, match=re.escape("the key is for 'example.com/supportgate-kat'")
    ) as caught:
        open_checkpoint(foreign, signer.verifier())
    assert caught.value.field == "origin"


_ROOT = "NmQuc8JUCrEh46a/lUWwokmCzYMOsT080Z3jzmwCHsE="


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        (f"{NAME}\n3\n{_ROOT}\nextension\n", "checkpoint", "three lines"),
        (f"{NAME}\n3\n{_ROOT}", "checkpoint", "three lines"),
        (f"{NAME}\n3\n", "checkpoint", "three lines"),
        (f"\n3\n{_ROOT}\n", "origin", "not empty"),
        (f"my log\n3\n{_ROOT}\n", "origin", "no spaces"),
        (f"{NAME}\n03\n{_ROOT}\n", "tree_size", "without leading zeros"),
        (f"{NAME}\n+3\n{_ROOT}\n", "tree_size", "decimal digits"),
        (f"{NAME}\n-1\n{_ROOT}\n", "tree_size", "decimal digits"),
        (f"{NAME}\n3_0\n{_ROOT}\n", "tree_size", "decimal digits"),
        (f"{NAME}\n\N{ARABIC-INDIC DIGIT THREE}\n{_ROOT}\n", "tree_size", "decimal digits"),
        (f"{NAME}\n\n{_ROOT}\n", "tree_size", "decimal digits"),
        (f"{NAME}\n3\n{_ROOT[:-2]}=\n", "root_hash", "not standard base64"),
        (f"{NAME}\n3\n{_ROOT[:-2]}F=\n", "root_hash", "not canonical base64"),
        (f"{NAME}\n3\nAAAA\n", "root_hash", "a root hash has 32 bytes, not 3"),
    ],
)
def test_a_body_not_as_the_spec_writes_it_is_refused(body: str, field: str, message: str) -> None:
    with pytest.raises(InvalidNote, match=re.escape(message)) as caught:
        Checkpoint.parse(body)
    assert caught.value.field == field


def test_a_signed_body_that_is_not_a_checkpoint_is_refused() -> None:
    signer = NoteSigner.from_key(SIGNER_KEY)
    with pytest.raises(InvalidNote, match="three lines"):
        open_checkpoint(signer.sign(TEXT + "extension\n"), signer.verifier())
