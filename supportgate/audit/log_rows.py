"""What `supportgate audit verify` reads besides the entries, in range queries on the leaf
columns (each has a unique index)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, RowMapping, and_, func, or_, select
from sqlmodel import Session

from supportgate.db import Decision, LedgerEntry, LedgerNode, MatrixVersion, Waiver, table_of

_entries = table_of(LedgerEntry)
_nodes = table_of(LedgerNode)
_matrices = table_of(MatrixVersion)
_waivers = table_of(Waiver)
_decisions = table_of(Decision)


@dataclass(frozen=True, slots=True)
class LeafColumn:
    """A column naming the leaf of the entry a row is derived from."""

    entry_type: str
    column: Column[Any]
    label: str
    """How a row is named in a message: its table's word and the column that identifies it."""
    name: Column[Any]


LEAF_COLUMNS = (
    LeafColumn("decision", _decisions.c.leaf_index, "decision", _decisions.c.id),
    LeafColumn("matrix", _matrices.c.leaf_index, "matrix version", _matrices.c.version),
    LeafColumn("waiver-created", _waivers.c.leaf_index, "waiver", _waivers.c.id),
    LeafColumn("waiver-deleted", _waivers.c.deleted_leaf_index, "waiver", _waivers.c.id),
)


def nodes_completed(session: Session, first: int, last: int) -> dict[tuple[int, int], bytes]:
    """The stored nodes whose last leaf is one of first..last: node (level, idx) covers
    leaves [idx * 2**level, (idx + 1) * 2**level), so leaf j completes it when
    j + 1 == (idx + 1) * 2**level."""
    ranges = []
    for level in range((last + 1).bit_length()):
        low = -(-(first + 1) >> level) - 1  # ceil((first + 1) / 2**level) - 1
        high = ((last + 1) >> level) - 1
        if low <= high:
            ranges.append(and_(_nodes.c.level == level, _nodes.c.idx.between(low, high)))
    rows = session.execute(select(_nodes.c.level, _nodes.c.idx, _nodes.c.hash).where(or_(*ranges)))
    return {(int(level), int(idx)): bytes(digest) for level, idx, digest in rows}


def rows_at(session: Session, first: int, last: int) -> dict[str, dict[int, RowMapping]]:
    found = {}
    for leaf in LEAF_COLUMNS:
        rows = session.execute(select(leaf.column.table).where(leaf.column.between(first, last)))
        found[leaf.entry_type] = {int(row[leaf.column.key]): row for row in rows.mappings()}
    return found


def beyond(session: Session, size: int) -> tuple[int, str] | None:
    """The first entry, row or stored node past the log's `size` leaves, as (leaf, what)."""
    entry = session.execute(
        select(func.min(_entries.c.leaf_index)).where(_entries.c.leaf_index >= size)
    ).scalar_one_or_none()
    if entry is not None:
        return int(entry), "it lies beyond the head (not appended by supportgate)"
    for leaf in LEAF_COLUMNS:
        row = session.execute(
            select(leaf.column, leaf.name).where(leaf.column >= size).order_by(leaf.column)
        ).first()
        if row is not None:
            return int(row[0]), (
                f"{leaf.label} {row[1]} names a leaf beyond the head (not appended by supportgate)"
            )
    levels = range(size.bit_length() + 2)
    ends = session.execute(
        select(
            *(
                select(func.max(_nodes.c.idx)).where(_nodes.c.level == level).scalar_subquery()
                for level in levels
            )
        )
    ).one()
    for level, top in zip(levels, ends, strict=True):
        if top is not None and (top + 1) << level > size:
            return size, (
                f"the stored tree node (level {level}, index {top}) covers leaves beyond the "
                "head (not appended by supportgate)"
            )
    return None


def unanchored_row(session: Session, size: int, counted: Mapping[str, int]) -> str | None:
    """A row naming a leaf below `size` that no entry accounts for (the walk matched one row
    to each entry of its type and counted them in `counted`), a row naming no leaf, or a
    waiver marked deleted without its entry. None when there is none."""
    for leaf in LEAF_COLUMNS:
        rows = session.execute(
            select(func.count(leaf.column)).where(leaf.column < size)
        ).scalar_one()
        if rows != counted.get(leaf.entry_type, 0):
            twice = session.execute(
                select(leaf.column)
                .where(leaf.column < size)
                .group_by(leaf.column)
                .having(func.count() > 1)
                .limit(1)
            ).scalar_one_or_none()
            return (
                f"{rows} {leaf.label} rows name the {counted.get(leaf.entry_type, 0)} "
                f"{leaf.entry_type} entries below leaf {size}"
                + (f": leaf {twice} is named twice" if twice is not None else "")
            )
    for leaf in LEAF_COLUMNS[:3]:
        nameless = session.execute(
            select(leaf.name).where(leaf.column.is_(None)).limit(1)
        ).scalar_one_or_none()
        if nameless is not None:
            return f"{leaf.label} {nameless} names no leaf (no entry records it)"
    hidden = session.execute(
        select(_waivers.c.id)
        .where(_waivers.c.deleted_at.is_not(None), _waivers.c.deleted_leaf_index.is_(None))
        .limit(1)
    ).scalar_one_or_none()
    if hidden is not None:
        return f"waiver {hidden} is marked deleted, but no waiver-deleted entry records it"
    return None
