"""What the ledger's modules raise.

Each error that comes from input (a proof, a note, a key, a range asked for) names the field
that failed in its `field` attribute, so that the one HTTP mapping (issue 11) can say where
without parsing the message. They hang from the project's tree in supportgate.errors; the
next step of issue 11 moves them into that file beside the others.
"""

from __future__ import annotations

from supportgate.errors import DatabaseError, InputError


class LedgerInputError(InputError):
    """Input to the ledger that does not hold; `field` names what failed."""

    def __init__(self, message: str, *, field: str) -> None:
        self.message = message
        self.field = field
        super().__init__(f"{field}: {message}")


class OutOfRange(LedgerInputError):
    """A leaf index or tree size the log does not have (yet)."""


class InvalidProof(LedgerInputError):
    """An inclusion or consistency proof that does not lead to the given root(s)."""


class InvalidKey(LedgerInputError):
    """A signer or verifier key that is not in the note key encoding, or whose hash is wrong."""


class InvalidNote(LedgerInputError):
    """A signed note or checkpoint that is malformed, or not signed by the expected key."""


class NodeStoreError(DatabaseError):
    """The node store lacks a node the tree needs, or was asked to rewrite one."""
