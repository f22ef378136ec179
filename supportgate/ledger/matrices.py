"""The published matrix versions (`matrix_versions`): the one module that writes them, in
the ledger's transaction. Reads live in supportgate/matrix/repository.py."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Table, insert, select
from sqlmodel import Session

from supportgate.db import MatrixVersion

from .batches import MatrixPublication

_versions: Table = MatrixVersion.__table__  # type: ignore[attr-defined]


def published(session: Session, versions: Sequence[str]) -> set[str]:
    """Which of `versions` are published already."""
    if not versions:
        return set()
    statement = select(_versions.c.version).where(_versions.c.version.in_(sorted(set(versions))))
    return set(session.execute(statement).scalars())


def insert_versions(
    session: Session, publications: Sequence[MatrixPublication], leaves: Sequence[int]
) -> None:
    """The versions' rows, each with the leaf_index of its `matrix` entry."""
    if publications:
        session.execute(
            insert(_versions),
            [
                {
                    "version": p.version,
                    "document": p.document,
                    "digest": p.digest,
                    "effective_from": p.effective_from,
                    "published_at": p.published_at,
                    "published_by": p.published_by,
                    "leaf_index": leaf_index,
                    "provenance": None if p.provenance is None else p.provenance.document(),
                }
                for p, leaf_index in zip(publications, leaves, strict=True)
            ],
        )
