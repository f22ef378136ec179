"""Receipts: one entry, its inclusion proof and the signed checkpoint it leads to, in one JSON
document (`Receipt`) that anyone can check offline, against a verifier key obtained apart from
it: the receipt's own `verifier_key` shows only who signed it, so it must equal the trusted key.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from .checkpoint import open_checkpoint
from .errors import InvalidNote, TlogInputError
from .merkle import leaf_hash, verify_inclusion
from .note import NoteVerifier, decode_base64

NonNegative = Annotated[int, msgspec.Meta(ge=0)]


class Receipt(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    entry: str
    leaf_index: NonNegative
    tree_size: NonNegative
    hashes: list[str]
    checkpoint: str
    verifier_key: str


def encode_receipt(receipt: Receipt) -> bytes:
    return msgspec.json.format(msgspec.json.encode(receipt), indent=2) + b"\n"


def read_receipt(data: bytes) -> Receipt:
    try:
        return msgspec.json.decode(data, type=Receipt)
    except msgspec.ValidationError as exc:
        raise InvalidNote(str(exc), field="receipt") from exc
    except msgspec.DecodeError as exc:
        raise InvalidNote(f"not JSON: {exc}", field="receipt") from exc


def check_receipt(receipt: Receipt, key: NoteVerifier) -> None:
    """That the receipt holds against the trusted `key`; TlogInputError naming what fails."""
    if receipt.verifier_key.strip() != key.encoded():
        raise InvalidNote(
            f"the receipt names the key {receipt.verifier_key.strip()}, not {key.encoded()}",
            field="verifier_key",
        )
    checkpoint = open_checkpoint(receipt.checkpoint, key)
    if checkpoint.tree_size != receipt.tree_size:
        raise InvalidNote(
            f"the checkpoint is of {checkpoint.tree_size} entries, the receipt says "
            f"{receipt.tree_size}",
            field="tree_size",
        )
    hashes = [
        decode_base64(encoded, field=f"hashes[{position}]", error=InvalidNote)
        for position, encoded in enumerate(receipt.hashes)
    ]
    leaf = leaf_hash(receipt.entry.encode())
    try:
        verify_inclusion(leaf, receipt.leaf_index, receipt.tree_size, hashes, checkpoint.root_hash)
    except TlogInputError as exc:
        raise type(exc)(
            f"the entry is not leaf {receipt.leaf_index} of the signed tree: {exc.message}",
            field=exc.field,
        ) from exc
