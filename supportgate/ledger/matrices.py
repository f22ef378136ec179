"""The published matrix versions (`matrix_versions`): one fold of the log (`change_of`), and the
one module that writes them (docs/ledger.md). Reads live in supportgate/matrix/repository.py."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import insert, select
from sqlmodel import Session

from supportgate.db import MatrixVersion, table_of
from supportgate.manifests import decode_matrix
from supportgate.policy.engine import matrix_key

_versions = table_of(MatrixVersion)


def published(session: Session, versions: Sequence[str]) -> set[str]:
    if not versions:
        return set()
    statement = select(_versions.c.version).where(_versions.c.version.in_(sorted(set(versions))))
    return set(session.execute(statement).scalars())


def change_of(leaf_index: int, document: Mapping[str, Any]) -> dict[str, Any] | None:
    """The version's row a `matrix` entry's document (decoded JSON) makes; None: another
    entry. KeyError, TypeError, ValueError or ManifestError: the entry is not well-formed."""
    if document["type"] != "matrix":
        return None
    matrix = decode_matrix(msgspec.json.encode(document["document"]), fmt="json")
    return {
        "version": document["version"],
        "document": document["document"],
        "digest": matrix_key(document["document"]),
        "effective_from": matrix.effective_from,
        "published_at": datetime.fromisoformat(document["recorded_at"]),
        "published_by": document["published_by"],
        "leaf_index": leaf_index,
        "provenance": document.get("provenance"),
    }


def insert_versions(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        session.execute(insert(_versions), rows)
