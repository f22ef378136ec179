"""The transparency log's errors: its own tree, so that the library needs nothing else."""

from __future__ import annotations


class TlogError(Exception):
    pass


class TlogInputError(TlogError):
    """Input that does not hold: `message` says what is wrong, `field` which part (a JSON
    field name such as `leaf_index`, `hashes[2]`, `signatures[0]`)."""

    def __init__(self, message: str, *, field: str) -> None:
        self.message = message
        self.field = field
        super().__init__(self.describe())

    def describe(self) -> str:
        return f"{self.field}: {self.message}"


class OutOfRange(TlogInputError):
    """A leaf index or tree size the log does not have (yet)."""


class InvalidProof(TlogInputError):
    """An inclusion or consistency proof that does not lead to the given root(s)."""


class InvalidKey(TlogInputError):
    """A signer or verifier key that is not in the note key encoding, or whose hash is wrong."""


class InvalidNote(TlogInputError):
    """A signed note or checkpoint that is malformed, or not signed by the expected key."""


class NodeStoreError(TlogError):
    """A node store lacks a node the tree needs, or was asked to rewrite one."""
