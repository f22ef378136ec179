"""The tracked state the log leads to (supportgate/ledger/tracking.py's fold, replayed), and
where the tables disagree with it (the two columns the log cannot pin: docs/audit-verify.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import func, select
from sqlmodel import Session

from supportgate.db import Decision as DecisionRow
from supportgate.db import Manifest, TrackedSpan, table_of
from supportgate.errors import DatabaseError
from supportgate.ledger.batches import Key, Tracking
from supportgate.ledger.tracking import SPAN_COLUMNS, Change, Span, change_of, current_row, fold
from supportgate.policy.inputs import canonical_digest

Row = Mapping[str, Any]

INPUT_CHUNK = 500

_manifests = table_of(Manifest)
_decisions = table_of(DecisionRow)
_spans = table_of(TrackedSpan)
_canonical = msgspec.json.Encoder(order="sorted")


class UnusableInput(DatabaseError):
    """The latest decision's stored policy input is missing or is not the one its entry
    names, so the log cannot say what content is tracked."""

    def __init__(self, leaf_index: int, reason: str) -> None:
        self.leaf_index = leaf_index
        self.reason = reason
        super().__init__(f"leaf {leaf_index}: {reason}")


class TrackingFromLog:
    """The fold replayed, fed the log's entries in leaf order. The spans it ends are final:
    `drain` hands them over to be checked or written, so memory holds the open ones only."""

    def __init__(self) -> None:
        self.open: dict[Key, Span] = {}
        self.latest: dict[Key, Change] = {}
        self.spans = 0
        """Spans opened (one per decision entry)."""
        self._ended: list[Span] = []

    def add(self, leaf_index: int, document: Mapping[str, Any]) -> None:
        """One entry's document (decoded JSON); KeyError, TypeError or ValueError when it
        is not well-formed."""
        change = change_of(leaf_index, document)
        if change is None:
            return
        for span in fold(self.open, [change]):
            if span.valid_to is not None:
                self._ended.append(span)
        if change.decision_id is None:
            self.latest.pop(change.key, None)
        else:
            self.latest[change.key] = change
            self.spans += 1

    def drain(self) -> list[Span]:
        ended, self._ended = self._ended, []
        return ended

    def expected_rows(self, session: Session) -> dict[Key, Row]:
        """The row each tracked manifest must have; UnusableInput when a latest decision's
        stored input is gone or edited."""
        keys = sorted(self.open)
        expected: dict[Key, Row] = {}
        for start in range(0, len(keys), INPUT_CHUNK):
            chunk = keys[start : start + INPUT_CHUNK]
            inputs = _policy_inputs(session, [self.open[key].leaf_index for key in chunk])
            for key in chunk:
                span, change = self.open[key], self.latest[key]
                tracking = tracking_of(span.kind, _content(change, inputs.get(span.leaf_index)))
                # as the writer makes it: created_at and last_evaluated_at are the lower
                # bounds of what the log allows
                at = change.evaluated_at or span.valid_from
                expected[key] = current_row(span, change.verdict, tracking, at)
        return expected


def row_wrongs(want: Row, row: Row) -> list[str]:
    wrong = [
        f"its {column} is {row[column]!r}, the log says {want[column]!r}"
        for column in _EXACT_COLUMNS
        if row[column] != want[column]
    ]
    if row["content"] != want["content"]:
        wrong.append(f"its content is not the content of decision {want['latest_decision_id']}")
    if row["updated_at"] != want["updated_at"]:
        wrong.append(
            f"its updated_at is {_shown(row['updated_at'])}, its last submission was "
            f"recorded at {_shown(want['updated_at'])}"
        )
    if not want["created_at"] <= row["created_at"] <= want["updated_at"]:
        wrong.append(
            f"its created_at {_shown(row['created_at'])} is not between its first decision "
            f"since tracking ({_shown(want['created_at'])}) and its last submission"
        )
    last = row["last_evaluated_at"]
    if last is None or last < want["last_evaluated_at"]:
        wrong.append(
            f"its last_evaluated_at {_shown(last)} is before its latest decision's "
            f"evaluation ({_shown(want['last_evaluated_at'])})"
        )
    return wrong


_EXACT_COLUMNS = (
    "latest_decision_id",
    "latest_verdict",
    "owner",
    "hardware_ref",
    "content_digest",
)


@dataclass(frozen=True, slots=True)
class Difference:
    """A tracked manifest whose row is not what the log says: missing (`row` None),
    not tracked at all (`expected` None), or with the columns named in `wrongs`."""

    key: Key
    expected: Row | None
    row: Row | None
    wrongs: Sequence[str]

    def describe(self) -> str:
        where = f"{self.key[0]}/{self.key[1]}"
        return f"the tracked-manifest table disagrees with the log at {where}: " + "; ".join(
            self.wrongs
        )


def differences(session: Session, expected: Mapping[Key, Row]) -> list[Difference]:
    found = []
    seen = set()
    for row in _rows(session):
        key = (row["kind"], row["name"])
        seen.add(key)
        want = expected.get(key)
        if want is None:
            found.append(
                Difference(key, None, row, ["it has a row, but the log does not track it"])
            )
        elif wrongs := row_wrongs(want, row):
            found.append(Difference(key, want, row, wrongs))
    for key in expected.keys() - seen:
        want = expected[key]
        found.append(
            Difference(
                key,
                want,
                None,
                [f"it has no row, but its latest decision {want['latest_decision_id']} tracks it"],
            )
        )
    return sorted(found, key=lambda difference: difference.key)


def _rows(session: Session) -> Iterator[Mapping[Any, Any]]:
    result = session.execute(select(_manifests).execution_options(yield_per=INPUT_CHUNK))
    yield from result.mappings()


def _policy_inputs(session: Session, leaves: list[int]) -> dict[int, str]:
    statement = select(_decisions.c.leaf_index, _decisions.c.policy_input).where(
        _decisions.c.leaf_index.in_(leaves)
    )
    return {int(leaf): text for leaf, text in session.execute(statement)}


def _content(change: Change, text: str | None) -> dict[str, Any]:
    decision = f"decision {change.decision_id}"
    if text is None:
        raise UnusableInput(change.leaf_index, f"the row of {decision} is missing")
    if canonical_digest(text.encode()) != change.input_digest:
        raise UnusableInput(
            change.leaf_index,
            f"the stored policy input of {decision} is not the one its entry names",
        )
    manifest = msgspec.json.decode(text).get("manifest")
    if not isinstance(manifest, dict):
        raise UnusableInput(change.leaf_index, f"the policy input of {decision} has no manifest")
    return manifest


def tracking_of(kind: str, content: dict[str, Any]) -> Tracking:
    """What the writer tracks of `content`, read from the content alone."""
    metadata = content.get("metadata")
    spec = content.get("spec")
    hardware = spec.get("hardware") if isinstance(spec, dict) else None
    owner = metadata.get("owner") if isinstance(metadata, dict) else None
    return Tracking(
        content=content,
        content_digest=canonical_digest(_canonical.encode(content)),
        owner=owner,
        hardware_ref=(
            hardware.get("ref")
            if kind == "DeploymentManifest" and isinstance(hardware, dict)
            else None
        ),
    )


def span_wrongs(session: Session, spans: Sequence[Span]) -> list[tuple[Span, str]]:
    wrong = []
    for start in range(0, len(spans), INPUT_CHUNK):
        chunk = spans[start : start + INPUT_CHUNK]
        statement = select(_spans).where(_spans.c.leaf_index.in_([s.leaf_index for s in chunk]))
        stored = {row["leaf_index"]: row for row in session.execute(statement).mappings()}
        for span in chunk:
            row = stored.get(span.leaf_index)
            if row is None:
                wrong.append((span, "its span is missing"))
                continue
            differ = [
                f"its {column} is {_shown(row[column])}, the log says "
                f"{_shown(getattr(span, column))}"
                for column in SPAN_COLUMNS
                if row[column] != getattr(span, column)
            ]
            if differ:
                wrong.append((span, "; ".join(differ)))
    return wrong


def spans_stored(session: Session) -> int:
    return int(session.execute(select(func.count()).select_from(_spans)).scalar_one())


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    return value.isoformat().replace("+00:00", "Z") if isinstance(value, datetime) else repr(value)
