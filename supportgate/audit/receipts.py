"""`supportgate audit receipt DECISION_ID` (supportgate/tlog/receipt.py). A decision newer than
the latest checkpoint is signed first, so a receipt can be had right after the decision.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import LedgerEntry, transaction
from supportgate.errors import DatabaseError, NotFound
from supportgate.ledger.checkpointer import Checkpointer
from supportgate.ledger.log import latest_checkpoint, tree
from supportgate.tlog import Receipt, TlogInputError, check_receipt

from . import repository


@dataclass(frozen=True, slots=True)
class MadeReceipt:
    receipt: Receipt
    signed_now: bool
    """The latest checkpoint did not cover the decision: one was signed for it."""


def make_receipt(
    sessions: sessionmaker[Session], checkpointer: Checkpointer, decision_id: str
) -> MadeReceipt:
    with transaction(sessions) as session:
        row = repository.stored_decision(session, decision_id)
        if row is None:
            raise NotFound(f"no decision has id {decision_id!r}", field="DECISION_ID")
        leaf_index = int(row["leaf_index"])
        latest = latest_checkpoint(session)
    signed_now = latest is None or latest.tree_size <= leaf_index
    if signed_now:
        checkpointer.sign_now()
    with transaction(sessions) as session:
        latest = latest_checkpoint(session)
        if latest is None or latest.tree_size <= leaf_index:
            raise DatabaseError(
                f"decision {decision_id} is leaf {leaf_index}, beyond the log's head: "
                "run `supportgate audit verify`"
            )
        entry = session.get(LedgerEntry, leaf_index)
        if entry is None:
            raise DatabaseError(
                f"decision {decision_id}'s entry (leaf {leaf_index}) is missing: "
                "run `supportgate audit verify`"
            )
        hashes = tree(session, latest.tree_size).inclusion_proof(leaf_index, latest.tree_size)
    receipt = Receipt(
        entry=entry.entry,
        leaf_index=leaf_index,
        tree_size=latest.tree_size,
        hashes=[base64.b64encode(digest).decode() for digest in hashes],
        checkpoint=latest.note,
        verifier_key=checkpointer.verifier().encoded(),
    )
    try:  # a receipt that fails is never handed out
        check_receipt(receipt, checkpointer.verifier())
    except TlogInputError as exc:
        raise DatabaseError(
            f"the log does not prove decision {decision_id}: {exc}; run `supportgate audit verify`"
        ) from exc
    return MadeReceipt(receipt, signed_now=signed_now)
