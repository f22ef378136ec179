"""The tracked state is one fold of the log: for random sequences of batches, the state the
writer applied forward is the state the log replays to, now and at the time of every entry
(the fleet as of then); and both are what a naive reading of the entries says."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, text
from sqlmodel import Session

from supportgate.audit.tracking_state import (
    TrackingFromLog,
    differences,
    span_wrongs,
    spans_stored,
)
from supportgate.db import create_db_engine
from supportgate.db.migrate import downgrade, upgrade
from supportgate.fleet.query import fleet_at
from supportgate.ledger import tracking
from supportgate.ledger.batches import Batch, DecisionWrite, Tracking, Untracking
from supportgate.ledger.log import entries_between, read_head
from supportgate.ledger.tracking import Span
from supportgate.ledger.write import apply_batch
from supportgate.manifests.decision import Decision, ManifestRef
from supportgate.policy.inputs import canonical_digest

from ..decisions import PROVEN_CHECKLIST, PROVEN_CLAIMS

KEYS = [(kind, name) for kind in ("HardwareManifest", "DeploymentManifest") for name in "ab"]
START = datetime(2026, 1, 1, tzinfo=UTC)
_canonical = msgspec.json.Encoder(order="sorted")


@dataclass(frozen=True)
class Op:
    key: int
    verdict: str
    owner: str


ops = st.lists(
    st.builds(
        Op,
        st.integers(0, len(KEYS) - 1),
        st.sampled_from(["supported", "experimental", "rejected"]),
        st.sampled_from(["team-a", "team-b"]),
    ),
    min_size=1,
    max_size=4,
)
batches = st.lists(
    st.tuples(st.integers(0, 2), st.sampled_from(["submit", "sweep", "untrack"]), ops),
    min_size=1,
    max_size=8,
)
"""Each batch: seconds after the one before (0: the same time), and what it writes, as the
writer gets them: a group of submissions, a sweep's batch, or an untracking."""


def _decision(
    key: tuple[str, str], n: int, op: Op, content: dict[str, Any], at: datetime, *, cause: str
) -> DecisionWrite:
    policy_input = _canonical.encode({"manifest": content})
    decision = Decision(
        id=f"d{n}",
        manifest=ManifestRef(kind=key[0], name=key[1]),  # type: ignore[arg-type]
        verdict=op.verdict,  # type: ignore[arg-type]
        allowed=op.verdict != "rejected",
        violations=(),
        claims=PROVEN_CLAIMS,
        checklist=PROVEN_CHECKLIST,
        recommendations=(),
        matrix_version="m1",
        policy_revision="p1",
        input_digest=canonical_digest(policy_input),
        evaluated_at=at - timedelta(milliseconds=n % 3),
        cause=cause,  # type: ignore[arg-type]
    )
    return DecisionWrite(decision=decision, policy_input=policy_input.decode())


def _apply(session: Session, plan: list[tuple[int, str, list[Op]]]) -> None:
    """Write `plan` through the writer's apply, batch by batch, as the service would."""
    now, n = START, 0
    for seconds, what, parts in plan:
        now += timedelta(seconds=seconds)
        heads = tracking.tracked_of(session, KEYS).heads()
        batch = Batch()
        for op in parts:
            key, n = KEYS[op.key], n + 1
            if what == "untrack":
                batch.untracked.append(
                    Untracking(kind=key[0], name=key[1], untracked_by="t", at=now)
                )
            elif what == "submit":
                content = {"kind": key[0], "metadata": {"name": key[1], "owner": op.owner}, "n": n}
                write = _decision(key, n, op, content, now, cause="submission")
                batch.decisions.append(
                    msgspec.structs.replace(
                        write,
                        tracking=Tracking(
                            content=content,
                            content_digest=canonical_digest(_canonical.encode(content)),
                            owner=op.owner,
                            hardware_ref=None,
                            changes_owner=n % 2 == 0,
                        ),
                    )
                )
            elif key in heads:  # a sweep re-evaluates the content it read as tracked
                write = _decision(key, n, op, _content(session, key), now, cause="schedule")
                batch.decisions.append(msgspec.structs.replace(write, expected=heads[key]))
        apply_batch(session, batch, now)


def _content(session: Session, key: tuple[str, str]) -> dict[str, Any]:
    statement = text("SELECT content FROM manifests WHERE kind = :k AND name = :n")
    stored = session.execute(statement, {"k": key[0], "n": key[1]}).scalar_one()
    content: dict[str, Any] = json.loads(stored) if isinstance(stored, str) else stored
    return content


def _replayed(
    session: Session,
) -> tuple[TrackingFromLog, list[Span], list[tuple[int, dict[str, Any]]]]:
    replay = TrackingFromLog()
    entries = []
    for entry in entries_between(session, 0, read_head(session).size - 1):
        document = msgspec.json.decode(entry.entry)
        entries.append((int(entry.leaf_index), document))
        replay.add(int(entry.leaf_index), document)
    spans = [*replay.drain(), *replay.open.values()]
    return replay, spans, entries


def _naively_at(
    entries: list[tuple[int, dict[str, Any]]], at: datetime
) -> dict[tuple[str, str], str]:
    """(kind, name) -> the id of its decision at `at`: its last entry recorded by then, when
    that is a decision (the times only grow, so the last in leaf order is the latest)."""
    last: dict[tuple[str, str], str | None] = {}
    for _, document in entries:
        if datetime.fromisoformat(document["recorded_at"]) > at:
            break
        if document["type"] == "decision":
            manifest = document["decision"]["manifest"]
            last[(manifest["kind"], manifest["name"])] = document["decision"]["id"]
        elif document["type"] == "untracked":
            manifest = document["manifest"]
            last[(manifest["kind"], manifest["name"])] = None
    return {key: decision for key, decision in last.items() if decision is not None}


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=batches)
def test_forward_and_replayed_state_agree_now_and_at_every_entry(
    migrated_db: Engine, plan: list[tuple[int, str, list[Op]]]
) -> None:
    with Session(migrated_db) as session:
        session.begin()
        try:
            _apply(session, plan)
            replay, spans, entries = _replayed(session)
            assert differences(session, replay.expected_rows(session)) == []
            assert span_wrongs(session, spans) == []
            assert spans_stored(session) == len(spans) == replay.spans
            times = sorted({datetime.fromisoformat(doc["recorded_at"]) for _, doc in entries})
            for at in [START - timedelta(seconds=1), *times]:
                forward = {(m.kind, m.name): m.decision.id for m in fleet_at(session, at).manifests}
                replayed = {
                    span.key: span.decision_id
                    for span in spans
                    if span.valid_from <= at and (span.valid_to is None or at < span.valid_to)
                }
                assert forward == replayed == _naively_at(entries, at), at
        finally:
            session.rollback()


def test_migration_0011_replays_the_log_into_the_spans(migrated_db_url: str) -> None:
    """A database whose log was written before the spans existed gets the spans the writer
    would have written."""
    plan = [
        (0, "submit", [Op(0, "supported", "team-a"), Op(1, "rejected", "team-b")]),
        (1, "sweep", [Op(0, "rejected", "team-a")]),
        (1, "untrack", [Op(1, "supported", "team-b")]),
        (0, "submit", [Op(1, "experimental", "team-b")]),
    ]
    engine = create_db_engine(migrated_db_url)
    try:
        with Session(engine) as session, session.begin():
            _apply(session, plan)
        with Session(engine) as session:
            written = _spans(session)
    finally:
        engine.dispose()
    downgrade(migrated_db_url, "0010")
    upgrade(migrated_db_url)
    engine = create_db_engine(migrated_db_url)
    try:
        with Session(engine) as session:
            assert _spans(session) == written
            assert len(written) == 4
    finally:
        engine.dispose()


def _spans(session: Session) -> list[Any]:
    rows = session.execute(text("SELECT * FROM tracked_spans ORDER BY leaf_index"))
    return [tuple(row) for row in rows]


def test_tracked_of_reads_only_the_keys_asked_for(migrated_db: Engine) -> None:
    """It reads the keys' kinds and names together: a tracked key of a kind and a name asked
    for separately, (HardwareManifest, b) and (DeploymentManifest, a) here, is not among them."""
    submit = [Op(key, "supported", "team-a") for key in range(len(KEYS))]
    with Session(migrated_db) as session, session.begin():
        _apply(session, [(0, "submit", submit)])
        asked = [("HardwareManifest", "a"), ("DeploymentManifest", "b")]
        found = tracking.tracked_of(session, asked)
        assert sorted(found.spans) == sorted(found.rows) == sorted(asked)
        session.rollback()
