"""A transparency log on its own, importing nothing else of supportgate (docs/ledger.md).
The errors load with the package, the rest of `__all__` on first use, so importing an error
(supportgate/errors.py does) does not load `cryptography`, which `supportgate check` never
needs (about 35 ms of its start-up)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    InvalidKey,
    InvalidNote,
    InvalidProof,
    NodeStoreError,
    OutOfRange,
    TlogError,
    TlogInputError,
)

if TYPE_CHECKING:
    from .checkpoint import Checkpoint, open_checkpoint, sign_checkpoint, unverified_checkpoint
    from .merkle import (
        EMPTY_ROOT,
        MerkleTree,
        leaf_hash,
        node_hash,
        verify_consistency,
        verify_inclusion,
    )
    from .nodestore import HASH_SIZE, NodeId, NodeStore
    from .note import NoteSigner, NoteVerifier, check_name, open_note
    from .receipt import Receipt, check_receipt, encode_receipt, read_receipt

__all__ = [
    "EMPTY_ROOT",
    "HASH_SIZE",
    "Checkpoint",
    "InvalidKey",
    "InvalidNote",
    "InvalidProof",
    "MerkleTree",
    "NodeId",
    "NodeStore",
    "NodeStoreError",
    "NoteSigner",
    "NoteVerifier",
    "OutOfRange",
    "Receipt",
    "TlogError",
    "TlogInputError",
    "check_name",
    "check_receipt",
    "encode_receipt",
    "leaf_hash",
    "node_hash",
    "open_checkpoint",
    "open_note",
    "read_receipt",
    "sign_checkpoint",
    "unverified_checkpoint",
    "verify_consistency",
    "verify_inclusion",
]

if not TYPE_CHECKING:  # mypy reads the imports above: a name missing here is its error

    def __getattr__(name: str) -> Any:
        for module in ("checkpoint", "merkle", "nodestore", "note", "receipt"):
            found = vars(importlib.import_module(f"{__name__}.{module}")) if name in __all__ else {}
            if name in found:
                return found[name]
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
