"""What is tracked: one `fold` of the log, applied forward by the writer and replayed by `audit
verify` and `rebuild-tracking`; the one writer of `manifests` and `tracked_spans` (docs/ledger.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from supportgate.db import Manifest, TrackedSpan, table_of
from supportgate.db.bulk import append_rows
from supportgate.db.keys import in_keys, listed, one_of
from supportgate.manifests.decision import Decision

from .batches import Key, TrackedHead, Tracking

_manifests = table_of(Manifest)
_spans = table_of(TrackedSpan)


@dataclass(frozen=True, slots=True)
class Change:
    """What one entry does to the tracked state: a decision tracks `key` with it, an
    untracking (decision_id None) stops tracking it."""

    key: Key
    leaf_index: int
    at: datetime
    """The entry's recorded_at."""
    decision_id: str | None = None
    verdict: str = ""
    submission: bool = False
    evaluated_at: datetime | None = None
    input_digest: str = ""

    @classmethod
    def decided(cls, leaf_index: int, at: datetime, decision: Decision) -> Change:
        return cls(
            key=(decision.manifest.kind, decision.manifest.name),
            leaf_index=leaf_index,
            at=at,
            decision_id=decision.id,
            verdict=decision.verdict,
            submission=decision.cause == "submission",
            evaluated_at=decision.evaluated_at,
            input_digest=decision.input_digest,
        )


def change_of(leaf_index: int, document: Mapping[str, Any]) -> Change | None:
    """The change an entry's document (decoded JSON) makes; None: it changes no tracking.
    KeyError, TypeError or ValueError: the entry is not well-formed."""
    at = datetime.fromisoformat(document["recorded_at"])
    if document["type"] == "untracked":
        manifest = document["manifest"]
        return Change((manifest["kind"], manifest["name"]), leaf_index, at)
    if document["type"] != "decision":
        return None
    decision = document["decision"]
    return Change(
        key=(decision["manifest"]["kind"], decision["manifest"]["name"]),
        leaf_index=leaf_index,
        at=at,
        decision_id=decision["id"],
        verdict=decision["verdict"],
        submission=decision["cause"] == "submission",
        evaluated_at=datetime.fromisoformat(decision["evaluated_at"]),
        input_digest=decision["input_digest"],
    )


@dataclass(frozen=True, slots=True)
class Span:
    """A `tracked_spans` row (supportgate/db/tables.py: TrackedSpan says what each means)."""

    kind: str
    name: str
    leaf_index: int
    decision_id: str
    valid_from: datetime
    tracked_since: datetime
    submitted_at: datetime
    valid_to: datetime | None = None

    @property
    def key(self) -> Key:
        return (self.kind, self.name)


def step(open_span: Span | None, change: Change) -> tuple[Span | None, Span | None]:
    """The fold's step: (the open span `change` ends, the span it opens). A span never ends
    before it began, whatever the clocks that stamped the entries said."""
    ended = None
    if open_span is not None:
        ended = replace(open_span, valid_to=max(change.at, open_span.valid_from))
    if change.decision_id is None:
        return ended, None
    since = change.at if open_span is None else open_span.tracked_since
    submitted = change.at if change.submission or open_span is None else open_span.submitted_at
    opened = Span(*change.key, change.leaf_index, change.decision_id, change.at, since, submitted)
    return ended, opened


def fold(open_spans: dict[Key, Span], changes: Iterable[Change]) -> list[Span]:
    """Apply `changes` (in log order) to `open_spans` (updated in place); the spans they
    ended or opened, in leaf order, each as it stands after them."""
    touched: dict[int, Span] = {}
    for change in changes:
        ended, opened = step(open_spans.pop(change.key, None), change)
        if ended is not None:
            touched[ended.leaf_index] = ended
        if opened is not None:
            open_spans[change.key] = touched[opened.leaf_index] = opened
    return [touched[leaf] for leaf in sorted(touched)]


def apply(
    session: Session,
    changes: Sequence[Change],
    tracked: Mapping[int, Tracking],
    open_spans: dict[Key, Span],
) -> None:
    """Apply `changes` (in log order) forward: the spans, then the `manifests` rows.
    `tracked`: a submission's leaf -> the content it tracks; `open_spans`: the open span of
    every tracked key changed (tracked_of), updated in place."""
    if not changes:
        return
    advance(session, open_spans, changes)
    latest = {change.key: change for change in changes}
    content = {c.key: tracked[c.leaf_index] for c in changes if c.leaf_index in tracked}
    write_current(session, {key: open_spans.get(key) for key in latest}, latest, content)


def advance(session: Session, open_spans: dict[Key, Span], changes: Sequence[Change]) -> None:
    """Fold `changes` into `open_spans` and write the spans they end or open (migration 0011
    replays the log through it too)."""
    was_open = {span.leaf_index for span in open_spans.values()}
    touched = fold(open_spans, changes)
    write_spans(session, [span for span in touched if span.leaf_index in was_open], ended=True)
    write_spans(session, [span for span in touched if span.leaf_index not in was_open])


def write_current(
    session: Session,
    spans: Mapping[Key, Span | None],
    latest: Mapping[Key, Change],
    tracked: Mapping[Key, Tracking],
    evaluated: Mapping[Key, datetime | None] | None = None,
) -> None:
    """The `manifests` rows of `spans`' keys: deleted where the span is None; the whole row
    where new content is `tracked`; else only the latest decision moves. `evaluated` sets
    another last_evaluated_at than the latest decision's (rebuild keeps a later one)."""
    gone = [key for key, span in spans.items() if span is None]
    if gone:
        session.execute(delete(_manifests).where(in_keys(_manifests, gone)))
    rows, moves = [], dict[tuple[str, datetime | None], list[Key]]()
    for key, span in spans.items():
        if span is None:
            continue
        change = latest[key]
        at = (evaluated or {}).get(key, change.evaluated_at)
        tracking = tracked.get(key)
        if tracking is None:
            moves.setdefault((change.verdict, at), []).append(key)
        else:
            rows.append(current_row(span, change.verdict, tracking, at))
    if rows:
        session.execute(_UPSERTS[session.get_bind().dialect.name], rows)
    # An UPDATE per verdict and time (a sweep's batch: one per verdict), not one a row; the
    # decision is the open span's, which `advance` has just stored (docs/performance.md).
    for (verdict, at), keys in moves.items():
        moved = update(_manifests).where(in_keys(_manifests, keys))
        session.execute(
            moved.values(
                latest_decision_id=_OPEN_DECISION, latest_verdict=verdict, last_evaluated_at=at
            )
        )


_OPEN_DECISION = (
    select(_spans.c.decision_id)
    .where(
        _spans.c.kind == _manifests.c.kind,
        _spans.c.name == _manifests.c.name,
        _spans.c.valid_to.is_(None),
    )
    .scalar_subquery()
)


def write_spans(session: Session, spans: Sequence[Span], *, ended: bool = False) -> None:
    """Insert `spans`; with `ended`, only set the valid_to of spans stored open."""
    if not spans:
        return
    if not ended:
        rows = [{column: getattr(span, column) for column in SPAN_COLUMNS} for span in spans]
        append_rows(session, _spans, rows)
        return
    # One UPDATE for the spans that end at the same time (all of a sweep's batch, recorded
    # together): an UPDATE a span cost the sweep ~1 s in 20,000 (docs/performance.md).
    ends: dict[datetime | None, list[int]] = {}
    for span in spans:
        ends.setdefault(span.valid_to, []).append(span.leaf_index)
    for valid_to, leaves in ends.items():
        ended_now = update(_spans).where(one_of(_spans.c.leaf_index, leaves))
        session.execute(ended_now.values(valid_to=valid_to))


SPAN_COLUMNS = tuple(Span.__dataclass_fields__)


def current_row(
    span: Span, verdict: str, tracking: Tracking, at: datetime | None
) -> dict[str, Any]:
    return {
        "kind": span.kind,
        "name": span.name,
        "owner": tracking.owner,
        "content": tracking.content,
        "content_digest": tracking.content_digest,
        "hardware_ref": tracking.hardware_ref,
        "latest_decision_id": span.decision_id,
        "latest_verdict": verdict,
        "created_at": span.tracked_since,
        "updated_at": span.submitted_at,
        "last_evaluated_at": at,
    }


_KEPT = ("kind", "name", "created_at")
"""Kept by a replaced row: a manifest's tracking began before (TrackedSpan.tracked_since)."""


_REPLACED = [column.name for column in _manifests.c if column.name not in _KEPT]


def _upsert(insert: Any) -> Any:
    upsert = insert(_manifests)
    replaced = {column: upsert.excluded[column] for column in _REPLACED}
    return upsert.on_conflict_do_update(index_elements=["kind", "name"], set_=replaced)


# Built once per dialect: building its `excluded` columns cost more CPU than running it.
_UPSERTS = {"postgresql": _upsert(postgresql.insert), "sqlite": _upsert(sqlite.insert)}


def stamp_evaluated(session: Session, keys: Sequence[Key], at: datetime) -> None:
    if keys:
        stamped = update(_manifests).where(in_keys(_manifests, keys))
        session.execute(stamped.values(last_evaluated_at=at))


@dataclass(frozen=True, slots=True)
class Tracked:
    """Keys as the writer finds them under the head lock: their open spans and their
    `manifests` rows. A key may have one without the other: a decision written without content
    to track opens a span and no row; a fleet inserted without the log has rows and no spans."""

    spans: dict[Key, Span]
    rows: dict[Key, Any]

    def heads(self) -> dict[Key, TrackedHead]:
        return {
            key: TrackedHead(
                content_digest=row.content_digest, latest_decision_id=row.latest_decision_id
            )
            for key, row in self.rows.items()
        }


_ROW_COLUMNS = ("owner", "content_digest", "latest_decision_id", "latest_verdict")


_OPEN_SPANS = (
    select(
        *(_spans.c[column] for column in SPAN_COLUMNS),
        *(_manifests.c[column] for column in _ROW_COLUMNS),
        _manifests.c.kind.label("row_kind"),
    )
    .select_from(_spans)
    .outerjoin(
        _manifests, (_manifests.c.kind == _spans.c.kind) & (_manifests.c.name == _spans.c.name)
    )
    .where(
        _spans.c.valid_to.is_(None),
        # the keys' kinds and names (tracked_of keeps the keys): built once, not per batch
        _spans.c.kind.in_(listed("kinds")),
        _spans.c.name.in_(listed("names")),
    )
)


def tracked_of(session: Session, keys: Sequence[Key]) -> Tracked:
    """What the writer admits a batch by and folds it from: one read for the keys with an
    open span (a manifest tracked), a second only for the others' rows."""
    found = Tracked(spans={}, rows={})
    if not keys:
        return found
    wanted = set(keys)
    kinds, names = sorted({kind for kind, _ in wanted}), sorted({name for _, name in wanted})
    for row in session.execute(_OPEN_SPANS, {"kinds": kinds, "names": names}):
        span = Span(*row[: len(SPAN_COLUMNS)])
        if span.key not in wanted:  # another kind's manifest of a wanted name
            continue
        found.spans[span.key] = span
        if row.row_kind is not None:
            found.rows[span.key] = row
    if missing := [key for key in keys if key not in found.spans]:
        m = _manifests
        statement = select(m.c.kind, m.c.name, *(m.c[column] for column in _ROW_COLUMNS))
        for row in session.execute(statement.where(in_keys(m, missing))):
            found.rows[(row.kind, row.name)] = row
    return found


def is_tracked(session: Session, kind: str, name: str) -> bool:
    return (kind, name) in tracked_of(session, [(kind, name)]).rows
