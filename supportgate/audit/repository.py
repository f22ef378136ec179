"""Reads of the audit history: keyset pages on `seq` (newest first) and stored decisions.

Never OFFSET: a decision appended while a client pages gets a higher seq, so it neither shifts
nor repeats later pages. Every filter has an index that ends in `seq` (tables.py). A `name`
without a `kind` is asked once per kind and merged, so each branch walks `(kind, name, seq)`.
`seq_range` first bounds the seqs to walk by index probes: unaided, PostgreSQL walks back from
the newest decision assuming matches are spread evenly, a full walk for filters that match only
old decisions (an old matrix_version, an `until` in the past).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    RowMapping,
    Select,
    exists,
    func,
    select,
    text,
    union_all,
)
from sqlmodel import Session

from supportgate.db import Decision as DecisionRow
from supportgate.db import DecisionRule, table_of
from supportgate.ledger.rows import DECISION_COLUMNS
from supportgate.manifests.decision import MANIFEST_KINDS as KINDS
from supportgate.pagination import MAX_SEQ

from .filters import AuditFilter

WINDOW_PROBE = 100_000
"""A time window with an `until` is probed for its exact seq range when it holds at most this
many decisions (an index-only scan of at most as many entries, ~10 ms). Unaided, the page
query walks back from the newest decision, past every decision newer than the window."""
RECENT_WINDOW_PROBE = 10_000
"""The same for a window with only `since`: it reaches the newest decisions, where the walk
starts, so only a small one (which other filters may thin out) is worth probing."""

_decisions = table_of(DecisionRow)
_rules = table_of(DecisionRule)

_DECISION_COLUMNS = [_decisions.c[name] for name in DECISION_COLUMNS]
_STORED_COLUMNS = [*_DECISION_COLUMNS, _decisions.c.policy_input, _decisions.c.recorded_at]


def decisions_page(
    session: Session, where: AuditFilter, *, before_seq: int | None, limit: int
) -> Sequence[RowMapping]:
    seqs = seq_range(session, where, before_seq=before_seq)
    if seqs is None:
        return []
    return session.execute(page_statement(where, seqs, limit=limit)).mappings().all()


def seq_range(
    session: Session, where: AuditFilter, *, before_seq: int | None
) -> tuple[int, int] | None:
    """Seqs (lowest, highest) that hold every match below `before_seq`; None when none can."""
    plan_for_values(session)
    low, high = 1, MAX_SEQ if before_seq is None else before_seq - 1
    for alternatives in _equality_probes(session, where, high):
        found = [(lo, hi) for lo, hi in alternatives if hi is not None and lo is not None]
        if not found:
            return None
        low = max(low, min(lo for lo, _ in found))
        high = min(high, max(hi for _, hi in found))
    if where.since is not None or where.until is not None:
        count, first, last = _window_probe(session, where, low, high)
        if count == 0:
            return None
        if count <= _probe_limit(where):  # else the page query walks the large window unaided
            low, high = max(low, first), min(high, last)
    return (low, high) if low <= high else None


def _equality_probes(
    session: Session, where: AuditFilter, high: int
) -> list[list[tuple[int | None, int | None]]]:
    """Per equality filter, the (min, max) seq of each way to match it (a name without a kind
    matches under either kind), all read in one statement of index probes."""
    c = _decisions.c
    filters: list[list[tuple[ColumnElement[Any], list[ColumnElement[bool]]]]] = []
    if where.name is not None:
        kinds = [where.kind] if where.kind is not None else list(KINDS)
        filters.append([(c.seq, [c.kind == kind, c.name == where.name]) for kind in kinds])
    if where.verdict is not None:
        filters.append([(c.seq, [c.verdict == where.verdict])])
    if where.matrix_version is not None:
        filters.append([(c.seq, [c.matrix_version == where.matrix_version])])
    if where.rule is not None:
        filters.append([(_rules.c.decision_seq, [_rules.c.rule == where.rule])])
    if not filters:
        return []
    probes = [
        probe
        for alternatives in filters
        for seq, conditions in alternatives
        for probe in (
            select(func.min(seq)).where(*conditions, seq <= high).scalar_subquery(),
            select(func.max(seq)).where(*conditions, seq <= high).scalar_subquery(),
        )
    ]
    values = iter(session.execute(select(*probes)).one())
    return [[(next(values), next(values)) for _ in alternatives] for alternatives in filters]


def plan_for_values(session: Session) -> None:
    """psycopg prepares a statement after a few runs, and PostgreSQL's generic plans for the
    probes and the page ignore the values that bound them (`since`, the cursor) and scan from
    the oldest decision (42x slower at 300,000 decisions; page 1,000 of 1,000,000 took 1.2 s;
    docs/performance.md). Planning every statement for its values costs the writers 5-17% of
    their CPU, so it is asked for in the audit's transaction only."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))


def _window_probe(
    session: Session, where: AuditFilter, low: int, high: int
) -> tuple[int, int, int]:
    """How many decisions (up to the probe limit + 1) the time window holds with seqs in
    low..high, and their lowest and highest seq (0, 0 when none)."""
    c = _decisions.c
    inside = select(c.seq).where(*_time_conditions(where), c.seq.between(low, high))
    window = inside.limit(_probe_limit(where) + 1).subquery()
    count, low, top = session.execute(
        select(func.count(), func.min(window.c.seq), func.max(window.c.seq)).select_from(window)
    ).one()
    return int(count), int(low or 0), int(top or 0)


def _probe_limit(where: AuditFilter) -> int:
    return WINDOW_PROBE if where.until is not None else RECENT_WINDOW_PROBE


def page_statement(where: AuditFilter, seqs: tuple[int, int], *, limit: int) -> Select[Any]:
    if where.name is not None and where.kind is None:
        branches = [_page_select(where, kind, seqs, limit).subquery().select() for kind in KINDS]
        merged = union_all(*branches).subquery()
        return select(merged).order_by(merged.c.seq.desc()).limit(limit)
    return _page_select(where, where.kind, seqs, limit)


def _page_select(
    where: AuditFilter, kind: str | None, seqs: tuple[int, int], limit: int
) -> Select[Any]:
    c = _decisions.c
    conditions: list[ColumnElement[bool]] = [c.seq.between(*seqs), *_time_conditions(where)]
    if kind is not None:
        conditions.append(c.kind == kind)
    if where.name is not None:
        conditions.append(c.name == where.name)
    if where.verdict is not None:
        conditions.append(c.verdict == where.verdict)
    if where.matrix_version is not None:
        conditions.append(c.matrix_version == where.matrix_version)
    if where.rule is not None:
        # The seq bounds inside EXISTS let the (rule, decision_seq) index start at the cursor
        # instead of reading down from the newest entry on deep pages.
        conditions.append(
            exists().where(
                _rules.c.decision_seq == c.seq,
                _rules.c.rule == where.rule,
                _rules.c.decision_seq.between(*seqs),
            )
        )
    return select(*_DECISION_COLUMNS).where(*conditions).order_by(c.seq.desc()).limit(limit)


def _time_conditions(where: AuditFilter) -> list[ColumnElement[bool]]:
    c = _decisions.c
    conditions: list[ColumnElement[bool]] = []
    if where.since is not None:
        conditions.append(c.evaluated_at >= where.since)
    if where.until is not None:
        conditions.append(c.evaluated_at < where.until)
    return conditions


def rules_between(
    session: Session, first_seq: int, last_seq: int
) -> dict[int, set[tuple[str, str]]]:
    statement = select(_rules.c.decision_seq, _rules.c.rule, _rules.c.severity).where(
        _rules.c.decision_seq.between(first_seq, last_seq)
    )
    found: dict[int, set[tuple[str, str]]] = {}
    for seq, rule, severity in session.execute(statement):
        found.setdefault(int(seq), set()).add((rule, severity))
    return found


def stored_decision(session: Session, decision_id: str) -> RowMapping | None:
    statement = select(*_STORED_COLUMNS).where(_decisions.c.id == decision_id)
    return session.execute(statement).mappings().first()


def decision_ids_after(
    session: Session, *, after_seq: int, since: datetime | None, limit: int
) -> list[tuple[int, str]]:
    c = _decisions.c
    statement = select(c.seq, c.id).where(c.seq > after_seq)
    if since is not None:
        statement = statement.where(c.evaluated_at >= since)
    rows = session.execute(statement.order_by(c.seq).limit(limit))
    return [(int(seq), str(id_)) for seq, id_ in rows]
