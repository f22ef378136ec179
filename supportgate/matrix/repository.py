from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlmodel import Session

from supportgate.db import MatrixVersion


def digests(session: Session) -> dict[str, str]:
    """Every published version's digest, by version (no documents read)."""
    statement = select(MatrixVersion.version, MatrixVersion.digest)  # type: ignore[call-overload]
    return dict(session.execute(statement).all())


def versions_named(session: Session, versions: Sequence[str]) -> Sequence[MatrixVersion]:
    statement = select(MatrixVersion).where(MatrixVersion.version.in_(versions))  # type: ignore[attr-defined]
    return session.execute(statement).scalars().all()
