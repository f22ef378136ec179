"""The audit head: the one row that says where the decision hash chain ends."""

from __future__ import annotations

from sqlmodel import Session, select

from .tables import AUDIT_GENESIS_HASH, AUDIT_HEAD_ID, AuditHead


def lock_audit_head(session: Session) -> AuditHead:
    """The audit head, locked until the transaction ends, and freshly read.

    Call it first in `transaction(factory, write=True)`: PostgreSQL locks the row (SELECT
    ... FOR UPDATE); SQLite already holds the write lock from BEGIN IMMEDIATE. Either way
    the next appender waits, so the chain stays linear across threads and processes. The
    row is made (at the genesis hash) if a database was created without the migrations.
    """
    statement = (
        select(AuditHead)
        .where(AuditHead.id == AUDIT_HEAD_ID)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    head = session.exec(statement).one_or_none()
    if head is None:
        head = AuditHead(id=AUDIT_HEAD_ID, last_seq=0, last_hash=AUDIT_GENESIS_HASH)
        session.add(head)
        session.flush()
    return head
