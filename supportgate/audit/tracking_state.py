"""The tracked-manifest state the log leads to, and where the `manifests` table disagrees.

This module only derives; the table's writer is the ledger's. `supportgate audit verify`
compares the table with what is derived here, and `supportgate audit rebuild-tracking`
(rebuild.py) restores the table from it. Read in leaf order, the entries say:

- a `decision` entry of (kind, name) tracks it, with that decision as its latest; an
  `untracked` entry ends the tracking (a later decision starts it again);
- `content` is the `manifest` of the latest decision's stored policy input (a sweep
  evaluates the tracked content, a submission brings new content: either way the latest
  decision's input holds what is tracked), used only when the input still has the entry's
  `input_digest`; `content_digest` is its canonical digest, `owner` its metadata.owner and
  `hardware_ref` a DeploymentManifest's spec.hardware.ref;
- `latest_decision_id` and `latest_verdict` are the latest decision's;
- `updated_at` is the recorded_at of the latest `submission` decision since the tracking
  began (only a submission changes the content);
- `created_at` lies between the recorded_at of the first decision since the tracking began
  and `updated_at`: exactly the first for a database that began with the log, but a
  database migrated from the hash chain (migration 0005) kept no record of untracking, so a
  manifest untracked and tracked again before the migration was created later than that;
- `last_evaluated_at` is not before the latest decision's evaluated_at: a sweep that finds
  a manifest unchanged moves it forward without appending an entry.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import Table, select
from sqlmodel import Session

from supportgate.db import Decision as DecisionRow
from supportgate.db import Manifest
from supportgate.errors import DatabaseError
from supportgate.policy.inputs import canonical_digest

Key = tuple[str, str]
"""(kind, name) of a tracked manifest."""

INPUT_CHUNK = 500
"""Stored policy inputs read per query."""

_manifests: Table = Manifest.__table__  # type: ignore[attr-defined]
_decisions: Table = DecisionRow.__table__  # type: ignore[attr-defined]
_canonical = msgspec.json.Encoder(order="sorted")


class UnusableInput(DatabaseError):
    """The latest decision's stored policy input is missing or is not the one its entry
    names, so the log cannot say what content is tracked."""

    def __init__(self, leaf_index: int, reason: str) -> None:
        self.leaf_index = leaf_index
        self.reason = reason
        super().__init__(f"leaf {leaf_index}: {reason}")


@dataclass(slots=True)
class _Tracked:
    """What the entries since the tracking of one manifest began say (times as the entries
    write them: RFC 3339 text, parsed only for the comparison)."""

    first_recorded_at: str
    latest_leaf: int
    latest_id: str
    latest_verdict: str
    latest_input_digest: str
    latest_evaluated_at: str
    submitted_at: str | None


class TrackingFromLog:
    """The tracking state, fed the log's entries in leaf order."""

    def __init__(self) -> None:
        self._tracked: dict[Key, _Tracked] = {}

    def __len__(self) -> int:
        return len(self._tracked)

    def add(self, leaf_index: int, document: Mapping[Any, Any]) -> None:
        """One entry's document (decoded JSON); other types than decision and untracked
        leave the tracking as it is."""
        if document["type"] == "untracked":
            manifest = document["manifest"]
            self._tracked.pop((manifest["kind"], manifest["name"]), None)
            return
        if document["type"] != "decision":
            return
        decision = document["decision"]
        key = (decision["manifest"]["kind"], decision["manifest"]["name"])
        recorded_at = document["recorded_at"]
        tracked = self._tracked.get(key)
        submitted = recorded_at if decision["cause"] == "submission" else None
        if tracked is None:
            tracked = self._tracked[key] = _Tracked(
                recorded_at, leaf_index, "", "", "", "", submitted
            )
        tracked.latest_leaf = leaf_index
        tracked.latest_id = decision["id"]
        tracked.latest_verdict = decision["verdict"]
        tracked.latest_input_digest = decision["input_digest"]
        tracked.latest_evaluated_at = decision["evaluated_at"]
        tracked.submitted_at = submitted or tracked.submitted_at

    def expected_rows(self, session: Session) -> dict[Key, ExpectedRow]:
        """The row each tracked manifest must have; UnusableInput when a latest decision's
        stored input is gone or edited."""
        keys = sorted(self._tracked)
        expected = {}
        for start in range(0, len(keys), INPUT_CHUNK):
            chunk = keys[start : start + INPUT_CHUNK]
            inputs = _policy_inputs(session, [self._tracked[key].latest_leaf for key in chunk])
            for key in chunk:
                tracked = self._tracked[key]
                content = _content(tracked, inputs.get(tracked.latest_leaf))
                expected[key] = ExpectedRow.of(key, tracked, content)
        return expected


@dataclass(frozen=True, slots=True)
class ExpectedRow:
    """The `manifests` row the log leads to (created_at as a range; last_evaluated_at as
    its lower bound)."""

    kind: str
    name: str
    owner: str | None
    content: dict[str, Any]
    content_digest: str
    hardware_ref: str | None
    latest_decision_id: str
    latest_verdict: str
    updated_at: datetime
    created_from: datetime
    evaluated_from: datetime

    @classmethod
    def of(cls, key: Key, tracked: _Tracked, content: dict[str, Any]) -> ExpectedRow:
        metadata = content.get("metadata")
        spec = content.get("spec")
        hardware = spec.get("hardware") if isinstance(spec, dict) else None
        first = _time(tracked.first_recorded_at)
        return cls(
            kind=key[0],
            name=key[1],
            owner=metadata.get("owner") if isinstance(metadata, dict) else None,
            content=content,
            content_digest=canonical_digest(_canonical.encode(content)),
            hardware_ref=(
                hardware.get("ref")
                if key[0] == "DeploymentManifest" and isinstance(hardware, dict)
                else None
            ),
            latest_decision_id=tracked.latest_id,
            latest_verdict=tracked.latest_verdict,
            updated_at=_time(tracked.submitted_at) if tracked.submitted_at else first,
            created_from=first,
            evaluated_from=_time(tracked.latest_evaluated_at),
        )

    def wrongs(self, row: Mapping[Any, Any]) -> list[str]:
        """What of `row` is not as the log says (nothing: `[]`)."""
        wrong = [
            f"its {column} is {row[column]!r}, the log says {getattr(self, column)!r}"
            for column in _EXACT_COLUMNS
            if row[column] != getattr(self, column)
        ]
        if row["content"] != self.content:
            wrong.append(f"its content is not the content of decision {self.latest_decision_id}")
        if row["updated_at"] != self.updated_at:
            wrong.append(
                f"its updated_at is {_shown(row['updated_at'])}, its last submission was "
                f"recorded at {_shown(self.updated_at)}"
            )
        if not self.created_from <= row["created_at"] <= self.updated_at:
            wrong.append(
                f"its created_at {_shown(row['created_at'])} is not between its first decision "
                f"since tracking ({_shown(self.created_from)}) and its last submission"
            )
        last = row["last_evaluated_at"]
        if last is None or last < self.evaluated_from:
            wrong.append(
                f"its last_evaluated_at {_shown(last)} is before its latest decision's "
                f"evaluation ({_shown(self.evaluated_from)})"
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
    expected: ExpectedRow | None
    row: Mapping[Any, Any] | None
    wrongs: Sequence[str]

    def describe(self) -> str:
        where = f"{self.key[0]}/{self.key[1]}"
        return f"the tracked-manifest table disagrees with the log at {where}: " + "; ".join(
            self.wrongs
        )


def differences(session: Session, expected: Mapping[Key, ExpectedRow]) -> list[Difference]:
    """Every tracked manifest whose row is not what the log says, in (kind, name) order."""
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
        elif wrongs := want.wrongs(row):
            found.append(Difference(key, want, row, wrongs))
    for key in expected.keys() - seen:
        want = expected[key]
        found.append(
            Difference(
                key,
                want,
                None,
                [f"it has no row, but its latest decision {want.latest_decision_id} tracks it"],
            )
        )
    return sorted(found, key=lambda difference: difference.key)


def _rows(session: Session) -> Iterator[Mapping[Any, Any]]:
    result = session.execute(select(_manifests).execution_options(yield_per=INPUT_CHUNK))
    yield from result.mappings()


def _policy_inputs(session: Session, leaves: list[int]) -> dict[int, tuple[str, str]]:
    """leaf_index -> (input_digest, policy_input) of the decisions at `leaves`."""
    statement = select(
        _decisions.c.leaf_index, _decisions.c.input_digest, _decisions.c.policy_input
    ).where(_decisions.c.leaf_index.in_(leaves))
    return {int(leaf): (digest, text) for leaf, digest, text in session.execute(statement)}


def _content(tracked: _Tracked, stored: tuple[str, str] | None) -> dict[str, Any]:
    decision = f"decision {tracked.latest_id}"
    if stored is None:
        raise UnusableInput(tracked.latest_leaf, f"the row of {decision} is missing")
    _, text = stored
    if canonical_digest(text.encode()) != tracked.latest_input_digest:
        raise UnusableInput(
            tracked.latest_leaf,
            f"the stored policy input of {decision} is not the one its entry names",
        )
    manifest = msgspec.json.decode(text).get("manifest")
    if not isinstance(manifest, dict):
        raise UnusableInput(tracked.latest_leaf, f"the policy input of {decision} has no manifest")
    return manifest


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _shown(moment: datetime | None) -> str:
    return "none" if moment is None else moment.isoformat().replace("+00:00", "Z")
