from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlmodel import Session

from supportgate.db import MatrixVersion


def all_versions(session: Session) -> Sequence[MatrixVersion]:
    return session.execute(select(MatrixVersion)).scalars().all()
