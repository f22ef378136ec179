"""Tracked manifests as evaluation subjects, in keyset batches over (kind, name), one held at
a time. A batch holds the tracked pools its deployments reference, so `manifest.hardware-ref`
fires exactly when the referenced pool is not tracked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import and_, case, select, tuple_
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import Decision as DecisionRow
from supportgate.db import Manifest as ManifestRow
from supportgate.db import SweepMemo as SweepMemoRow
from supportgate.db import table_of, transaction
from supportgate.db.keys import in_keys, one_of
from supportgate.evaluations.evaluator import Subject
from supportgate.manifests import DeploymentManifest, HardwareManifest, Manifest
from supportgate.manifests.decision import Cause

SWEEP_BATCH_SIZE = 1000
"""Manifests per batch (one transaction each); bench/bench_sweep.py measured 500 and 1000."""

Key = tuple[str, str]  # (kind, name)

WaiversFor = Callable[[Sequence[Key]], Mapping[Key, Sequence[Mapping[str, Any]]]]
"""The unexpired waivers of a batch's manifests, by (kind, name) (absent: none), each as the
policy input's `waivers` items (docs/policy-interface.md)."""

_manifests = table_of(ManifestRow)
_memos = table_of(SweepMemoRow)
_decisions = table_of(DecisionRow)
_COLUMNS = (
    _manifests.c.kind,
    _manifests.c.name,
    _manifests.c.content_digest,
    _manifests.c.hardware_ref,
    _manifests.c.latest_decision_id,
    _manifests.c.latest_verdict,
)
_TYPES: dict[str, type[Manifest]] = {
    "HardwareManifest": HardwareManifest,
    "DeploymentManifest": DeploymentManifest,
}


@dataclass(slots=True, eq=False)
class TrackedRow:
    kind: str
    name: str
    content_digest: str
    hardware_ref: str | None
    latest_decision_id: str | None
    latest_verdict: str | None
    memo: tuple[str, datetime | None] | None = None
    """Read with `judged` (iter_tracked_batches): the sweep memo's key and stable_until."""
    previous: tuple[str, str, str, Any] | None = None
    """Read with `judged`: the latest decision's verdict, matrix version, policy revision and
    its violations (None unless judged under those)."""
    content: dict[str, Any] | None = None  # None until read (`load_content`)
    manifest: Manifest | None = None
    """The content decoded once read; None too if it no longer decodes (an older schema's)."""

    @property
    def key(self) -> Key:
        return (self.kind, self.name)


@dataclass(frozen=True, slots=True)
class Pool:
    content_digest: str
    manifest: HardwareManifest | None


@dataclass(frozen=True, slots=True)
class TrackedBatch:
    rows: list[TrackedRow]
    pools: dict[str, Pool]

    @property
    def last_key(self) -> Key:
        return self.rows[-1].key

    @property
    def keys(self) -> list[Key]:
        return [row.key for row in self.rows]

    def load_content(self, sessions: sessionmaker[Session], rows: Sequence[TrackedRow]) -> None:
        wanted = [row for row in rows if row.content is None]
        if not wanted:
            return
        with transaction(sessions) as session:
            statement = select(_manifests.c.kind, _manifests.c.name, _manifests.c.content).where(
                in_keys(_manifests, [row.key for row in wanted])
            )
            found = {(kind, name): content for kind, name, content in session.execute(statement)}
        for row in wanted:
            row.content = found.get(row.key)  # untracked meanwhile: stays None, not evaluated
            row.manifest = _decoded(row.kind, row.content)

    def hardware(self, name: str) -> HardwareManifest | None:
        pool = self.pools.get(name)
        return None if pool is None else pool.manifest


def iter_tracked_batches(
    sessions: sessionmaker[Session],
    *,
    batch_size: int = SWEEP_BATCH_SIZE,
    only: Sequence[Key] | None = None,
    after: Key | None = None,
    judged: tuple[str, str] | None = None,
) -> Iterator[TrackedBatch]:
    """Each batch is read in its own transaction, so a long sweep holds no snapshot or lock
    between batches. With `judged` (a sweep's matrix version and policy revision), each row
    comes with its memo and latest decision in the same read, and without its content."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    wanted = None if only is None else sorted(set(only))
    cursor = after
    while True:
        where = _after(cursor)
        if wanted is not None:  # the next batch_size of them, tracked or not
            chunk = [key for key in wanted if cursor is None or key > cursor][:batch_size]
            if not chunk:
                return
            where, cursor = in_keys(_manifests, chunk), chunk[-1]
        with transaction(sessions) as session:
            rows = _rows(session, where, batch_size, judged)
            refs = {row.hardware_ref for row in rows if row.hardware_ref is not None}
            pools = _pools(session, refs)
        if rows:
            yield TrackedBatch(rows=rows, pools=pools)
        if wanted is None:
            if len(rows) < batch_size:
                return
            cursor = rows[-1].key


def subjects(
    batch: TrackedBatch,
    cause: Cause,
    waivers: Mapping[Key, Sequence[Mapping[str, Any]]] | None = None,
    *,
    rows: Sequence[TrackedRow] | None = None,
) -> list[Subject]:
    chosen = [row for row in (batch.rows if rows is None else rows) if row.manifest is not None]
    waivers = waivers or {}
    return [
        Subject(row.manifest, cause=cause, waivers=tuple(waivers.get(row.key, ())))  # type: ignore[arg-type]
        for row in chosen
    ]


def keys_referencing(
    sessions: sessionmaker[Session], pools: Mapping[str, datetime]
) -> dict[str, list[Key]]:
    """The deployments on these pools last judged before the pool's decision (`pools`: name
    -> its evaluated_at), by pool. One query for however many pools: CI may post many in a
    burst."""
    found: dict[str, list[Key]] = {}
    with transaction(sessions) as session:
        statement = (
            select(
                _manifests.c.hardware_ref,
                _manifests.c.kind,
                _manifests.c.name,
                _manifests.c.last_evaluated_at,
            )
            .where(
                _manifests.c.kind == "DeploymentManifest",
                one_of(_manifests.c.hardware_ref, pools),
            )
            .order_by(_manifests.c.kind, _manifests.c.name)
        )
        for ref, kind, name, judged_at in session.execute(statement):
            if judged_at is None or judged_at < pools[ref]:
                found.setdefault(ref, []).append((kind, name))
    return found


def _after(key: Key | None) -> Any:
    # A row value, which both databases answer by a range of the (kind, name) key; the `OR`
    # form had PostgreSQL filter every row before the cursor, batch after batch.
    return None if key is None else tuple_(_manifests.c.kind, _manifests.c.name) > key


def _rows(
    session: Session, where: Any, limit: int, judged: tuple[str, str] | None
) -> list[TrackedRow]:
    m, d = _manifests, _decisions
    if judged is None:
        statement = select(*_COLUMNS, m.c.content)
    else:
        same = and_(d.c.matrix_version == judged[0], d.c.policy_revision == judged[1])
        statement = select(
            *_COLUMNS,
            _memos.c.key,
            _memos.c.stable_until,
            d.c.verdict,
            d.c.matrix_version,
            d.c.policy_revision,
            case((same, d.c.document["violations"]), else_=None),
        ).select_from(
            m.outerjoin(
                _memos, and_(_memos.c.kind == m.c.kind, _memos.c.name == m.c.name)
            ).outerjoin(d, d.c.id == m.c.latest_decision_id)
        )
    if where is not None:
        statement = statement.where(where)
    statement = statement.order_by(m.c.kind, m.c.name).limit(limit)
    rows = []
    for found in session.execute(statement):
        row = TrackedRow(*found[:6])
        if judged is None:
            row.content = found[6]
            row.manifest = _decoded(row.kind, row.content)
        else:
            row.memo = None if found[6] is None else (found[6], found[7])
            row.previous = None if found[8] is None else tuple(found[8:])
        rows.append(row)
    return rows


def _decoded(kind: str, content: dict[str, Any] | None) -> Any:
    try:
        return msgspec.convert(content, _TYPES[kind])
    except (msgspec.ValidationError, KeyError):
        return None


def _pools(session: Session, names: set[str]) -> dict[str, Pool]:
    """Read and decoded afresh for every batch: keeping them across batches bought 8% of a
    sweep's CPU, under issue 24's bar (docs/performance.md, Speed devices)."""
    if not names:
        return {}
    statement = select(_manifests.c.name, _manifests.c.content_digest, _manifests.c.content).where(
        _manifests.c.kind == "HardwareManifest", one_of(_manifests.c.name, names)
    )
    return {
        name: Pool(content_digest=digest, manifest=_decoded("HardwareManifest", content))
        for name, digest, content in session.execute(statement)
    }
