"""Replaying a recorded decision: its stored policy input (evaluation time and resolved
hardware included), evaluated again under its matrix version by the same policies, must give
the same document, so the audit alone shows why a verdict was given.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.db import transaction
from supportgate.errors import UsageError
from supportgate.matrix.services import MatrixService
from supportgate.policy import PolicyEngine
from supportgate.policy.inputs import PolicyInput, canonical_digest

from . import repository


class ReplayParts(Protocol):
    """The running service's Runtime has them."""

    @property
    def sessions(self) -> sessionmaker[Session]: ...
    @property
    def engine(self) -> PolicyEngine: ...
    @property
    def matrices(self) -> MatrixService: ...


class CannotReplay(UsageError):
    """Unknown, or its matrix or policies are not these."""


@dataclass(frozen=True, slots=True)
class Replay:
    decision_id: str
    input_matches: bool
    """The stored input text still has the stored input_digest."""
    stored: dict[str, object]
    replayed: dict[str, object]

    @property
    def reproduced(self) -> bool:
        return self.input_matches and self.stored == self.replayed


def replay_decision(runtime: ReplayParts, decision_id: str) -> Replay:
    with transaction(runtime.sessions) as session:
        row = repository.stored_decision(session, decision_id)
    if row is None:
        raise CannotReplay(f"no decision has id {decision_id!r}", field="decision")
    revision = runtime.engine.policy_revision
    if row["policy_revision"] != revision:
        raise CannotReplay(
            f"decision {decision_id} was made under {row['policy_revision']}, "
            f"the engine runs {revision}",
            field="policy_revision",
        )
    published = runtime.matrices.get(row["matrix_version"])
    if published is None:
        raise CannotReplay(
            f"{row['matrix_version']!r} is not published here", field="matrix_version"
        )
    stored = _as_json({"verdict": row["verdict"], "allowed": row["allowed"], **row["document"]})
    if canonical_digest(row["policy_input"].encode()) != row["input_digest"]:
        return Replay(decision_id, input_matches=False, stored=stored, replayed={})
    policy_input = PolicyInput.from_document(msgspec.json.decode(row["policy_input"]))
    result = runtime.engine.evaluate(published.loaded, policy_input)
    return Replay(
        decision_id,
        input_matches=policy_input.digest == row["input_digest"],
        stored=stored,
        replayed=_as_json(result),
    )


def _as_json(value: object) -> dict[str, object]:
    """The value as JSON reads it back (lists, not tuples), so the two sides compare."""
    return msgspec.json.decode(msgspec.json.encode(value), type=dict[str, object])


REPLAY_CHUNK = 1000


def decision_ids(runtime: ReplayParts, *, since: datetime | None) -> Iterator[str]:
    """Every decision evaluated at or after `since` (all without), oldest first."""
    after = 0
    while True:
        with transaction(runtime.sessions) as session:
            found = repository.decision_ids_after(
                session, after_seq=after, since=since, limit=REPLAY_CHUNK
            )
        for _, decision_id in found:
            yield decision_id
        if len(found) < REPLAY_CHUNK:
            return
        after = found[-1][0]


def differences(replayed: Replay) -> list[str]:
    if not replayed.input_matches:
        return ["its stored policy input does not match its input_digest"]
    stored, again = replayed.stored, replayed.replayed
    found = []
    for field in sorted(stored.keys() | again.keys()):
        if stored.get(field) == again.get(field):
            continue
        if field in ("verdict", "allowed"):
            found.append(f"{field} {stored.get(field)} -> {again.get(field)}")
        else:
            found.append(f"{field}: not the same")
    return found
