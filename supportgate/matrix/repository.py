"""matrix_versions rows."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from supportgate.db import MatrixVersion
from supportgate.errors import ConflictError
from supportgate.ledger.entries import matrix_entry
from supportgate.ledger.log import append_entries, lock_head
from supportgate.manifests import Matrix, to_builtins


def all_versions(session: Session) -> Sequence[MatrixVersion]:
    return session.execute(select(MatrixVersion)).scalars().all()


def insert_version(
    session: Session, matrix: Matrix, *, digest: str, published_by: str | None, now: datetime
) -> MatrixVersion:
    """The version's row, and its `matrix` entry appended to the log."""
    head = lock_head(session)
    document = to_builtins(matrix)
    row = MatrixVersion(
        version=matrix.version,
        document=document,
        digest=digest,
        effective_from=matrix.effective_from,
        published_at=now,
        published_by=published_by,
        leaf_index=head.size,
    )
    session.add(row)
    try:
        session.flush()
    except IntegrityError as exc:
        raise ConflictError(
            f"matrix version {matrix.version!r} is already published; versions are never "
            "edited in place, publish a new version",
            field="$.version",
        ) from exc
    entry = matrix_entry(
        version=matrix.version, document=document, published_by=published_by, published_at=now
    )
    append_entries(session, head, [entry])
    return row
