"""The matrix_source_state rows: this is the one module that reads and writes them."""

from __future__ import annotations

from sqlmodel import Session

from supportgate.db import MatrixSourceState


def state(session: Session, source: str) -> MatrixSourceState | None:
    return session.get(MatrixSourceState, source)


def save(session: Session, row: MatrixSourceState) -> None:
    session.merge(row)
