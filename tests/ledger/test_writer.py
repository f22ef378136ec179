"""The ledger's one writer (a thread of the service): concurrent submissions in one log,
idempotency conflicts, a clean stop, a sweep's batch, the events of its commits, the
service's clock; and a POST's evaluation off the event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
from sqlalchemy import select, text
from sqlmodel import col

from supportgate.audit.verify import verify_log
from supportgate.auth import Principal
from supportgate.db import Decision, LedgerEntry, transaction
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.events import HardwareRecorded
from supportgate.ledger import sweeps
from supportgate.ledger.batches import (
    Batch,
    DecisionWrite,
    IdempotentAnswer,
    SweepMemo,
    SweepProgress,
    TrackedHead,
)
from supportgate.ledger.write import apply_batch
from supportgate.ledger.writer import IdempotencyConflict
from supportgate.manifests import decode_manifest

from ..api import Api, running_api
from ..api_support import hardware, post, rows
from ..clock import FakeClock

CONCURRENT = 200


@pytest.fixture
def writer_api(db_url: str) -> Iterator[Api]:
    with running_api(db_url) as running:
        yield running


def _submit_many(api: Api, count: int, **headers: str) -> list[Any]:
    """`count` evaluations at once through the service (as concurrent requests would)."""
    principal = Principal(key_id=1, name="ci", role="ci")
    bodies = [
        post_body(f"pool-{index:03d}", python="3.10" if index % 3 == 0 else "3.12")
        for index in range(count)
    ]

    async def submit_all() -> list[Any]:
        return await asyncio.gather(
            *(
                api.runtime.evaluations.submit(
                    body=body, fmt="json", principal=principal, idempotency_key=None
                )
                for body in bodies
            ),
            return_exceptions=True,
        )

    return asyncio.run(submit_all())


def post_body(name: str, **spec: Any) -> bytes:
    return json.dumps(hardware(name, **spec)).encode()


def test_entries_are_recorded_at_the_services_clock(db_url: str) -> None:
    """recorded_at is the Runtime's clock: a group of decisions, and a batch of its own (an
    untracking)."""
    start = (datetime.now(UTC) + timedelta(hours=1)).replace(microsecond=0)
    clock = FakeClock(start)
    with running_api(db_url, clock=clock) as api:
        post(api, hardware("pool-clock"))
        clock.advance(60)
        api.runtime.tracking.untrack("HardwareManifest", "pool-clock")
        with transaction(api.runtime.sessions) as session:
            entry, decision = col(LedgerEntry.recorded_at), col(Decision.recorded_at)
            stamps = session.execute(
                select(entry, decision)
                .outerjoin(Decision, col(Decision.leaf_index) == col(LedgerEntry.leaf_index))
                .order_by(col(LedgerEntry.leaf_index).desc())
                .limit(2)
            ).all()
    assert [tuple(row) for row in stamps] == [(start + timedelta(seconds=60), None), (start, start)]


def test_concurrent_decisions_are_committed_in_one_log(writer_api: Api) -> None:
    answers = _submit_many(writer_api, CONCURRENT)

    assert [getattr(answer, "status", answer) for answer in answers] == [201] * CONCURRENT
    assert rows(writer_api).decisions == CONCURRENT
    assert rows(writer_api).manifests == CONCURRENT
    report = verify_log(
        writer_api.runtime.sessions, verifier=writer_api.runtime.checkpointer.verifier()
    )
    assert report.intact
    assert report.entries == CONCURRENT + 1  # and the default matrix
    counted = writer_api.client.get("/metrics").text
    assert 'supportgate_decisions_total{cause="submission",verdict="rejected"}' in counted


def test_the_same_idempotency_key_twice_at_once_records_one(writer_api: Api) -> None:
    doc = hardware("pool-once")

    def send() -> Any:
        return post(writer_api, doc, **{"Idempotency-Key": "build-7"})

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(lambda _: send(), range(8)))

    assert {response.status_code for response in responses} == {201}
    assert len({response.json()["id"] for response in responses}) == 1
    assert rows(writer_api).decisions == 1


def test_a_conflict_fails_only_the_conflicting_record(writer_api: Api) -> None:
    """Two records claiming one Idempotency-Key, handed over together: the first is written,
    the second fails with IdempotencyConflict, and nothing else is lost."""
    records = [_record(writer_api, "pool-c", key="k-1"), _record(writer_api, "pool-d", key="k-1")]
    records.append(_record(writer_api, "pool-e"))
    futures = [writer_api.runtime.ledger.submit(Batch(decisions=[record])) for record in records]

    outcomes = [future.exception(timeout=60) for future in futures]

    assert outcomes[0] is None
    assert isinstance(outcomes[1], IdempotencyConflict)
    assert outcomes[2] is None
    assert rows(writer_api).decisions == 2
    assert rows(writer_api).idempotency_keys == 1


def test_stop_writes_what_was_submitted(db_url: str) -> None:
    with running_api(db_url) as running:
        records = [_record(running, f"pool-{index}") for index in range(50)]
        futures = [running.runtime.ledger.submit(Batch(decisions=[record])) for record in records]
    # the service has stopped: everything handed over before was written, nothing failed
    assert [future.exception(timeout=0) for future in futures] == [None] * 50
    places = {future.result(timeout=0).decisions[0] for future in futures}
    assert len(places) == 50  # 50 places in the log
    running.runtime.db.dispose()
    try:
        assert rows(running).decisions == 50
    finally:
        running.runtime.db.dispose()  # what rows() opened after the service stopped


def _record(api: Api, name: str, *, key: str | None = None) -> DecisionWrite:
    runtime = api.runtime
    evaluator = Evaluator(runtime.engine, runtime.matrices.current().loaded)
    manifest = decode_manifest(post_body(name), fmt="json")
    evaluation = evaluator.evaluate(Subject(manifest), evaluated_at=datetime.now(UTC))
    claim = None
    if key is not None:
        with runtime.db.connect() as connection:
            key_id = connection.execute(text("SELECT min(id) FROM api_keys")).scalar_one()
        claim = IdempotentAnswer(api_key_id=key_id, key=key, request_digest="d", status_code=201)
    return DecisionWrite(
        decision=evaluation.decision,
        policy_input=evaluation.policy_input.canonical.decode(),
        idempotency=claim,
    )


def _swept(write: DecisionWrite, expected: TrackedHead) -> DecisionWrite:
    """`write` as a sweep makes it: a sweep's cause, judged against the tracked head read."""
    decision = msgspec.structs.replace(write.decision, cause="schedule")
    return msgspec.structs.replace(write, decision=decision, expected=expected)


def test_a_sweep_batch_is_written_by_the_writer_thread(
    writer_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep's batch is applied by the writer's thread: it admits only decisions whose
    manifest is as the sweep read it, appends them, moves the tracked manifests, memos and
    the sweep's cursor in the same transaction."""
    for name in ("pool-a", "pool-b"):
        assert post(writer_api, hardware(name)).status_code == 201
    runtime = writer_api.runtime
    with runtime.db.connect() as connection:
        heads = {
            name: TrackedHead(content_digest=digest, latest_decision_id=latest)
            for name, digest, latest in connection.execute(
                text("SELECT name, content_digest, latest_decision_id FROM manifests")
            )
        }
    now = datetime.now(UTC)
    with transaction(runtime.sessions, write=True) as session:
        sweep_id = sweeps.insert_sweep(
            session,
            {
                "id": "sweep-under-test",
                "trigger": "test:writer-process",
                "cause": "schedule",
                "status": "running",
                "evaluated": 0,
                "changed": 0,
                "failed": 0,
                "requested_at": now,
            },
        )
    moved_on = TrackedHead(
        content_digest="a digest pool-b no longer has",
        latest_decision_id=heads["pool-b"].latest_decision_id,
    )
    decisions = [
        _swept(_record(writer_api, "pool-a"), heads["pool-a"]),
        _swept(_record(writer_api, "pool-b"), moved_on),
    ]
    progress = SweepProgress(
        sweep_id=sweep_id,
        cursor=("HardwareManifest", "pool-b"),
        evaluated=2,
        failed=0,
        unchanged=[],
        touched_at=now,
        memos=[
            SweepMemo(kind="HardwareManifest", name=name, key=f"memo-{name}", stable_until=None)
            for name in heads
        ],
    )

    applied_in: list[str] = []

    def recorded(*args: Any) -> Any:
        applied_in.append(threading.current_thread().name)
        return apply_batch(*args)

    monkeypatch.setattr("supportgate.ledger.writer.apply_batch", recorded)
    applied = runtime.ledger.write(Batch(decisions=decisions, sweep=progress))

    assert applied_in == ["ledger-writer"]
    assert applied.decisions[1] is None  # pool-b moved on since the sweep read it
    assert applied.recorded == 1
    with runtime.db.connect() as connection:
        found = connection.execute(text("SELECT name, latest_decision_id FROM manifests"))
        latest: dict[str, str] = dict(found.all())
        memos = [row[0] for row in connection.execute(text("SELECT name FROM sweep_memos"))]
        sweep = connection.execute(
            text("SELECT cursor_name, evaluated, changed FROM sweeps WHERE id = :id"),
            {"id": sweep_id},
        ).one()
    assert latest == {
        "pool-a": decisions[0].decision.id,
        "pool-b": heads["pool-b"].latest_decision_id,
    }
    assert memos == ["pool-a"]  # a dropped decision's memo is not saved
    assert tuple(sweep) == ("pool-b", 2, 1)
    assert rows(writer_api).decisions == 3
    report = verify_log(runtime.sessions, verifier=runtime.checkpointer.verifier())
    assert report.intact, report.summary()


def test_the_events_of_a_commit_are_published_before_the_answer(writer_api: Api) -> None:
    """The service hears what was committed (here: a pool recorded, which queues the sweep
    of the deployment judged before it) before the request is answered."""
    heard: list[Any] = []
    runtime = writer_api.runtime
    runtime.events.on(HardwareRecorded, heard.append)
    response = post(writer_api, hardware("pool-heard"))

    assert response.status_code == 201
    assert [(event.name, event.decision_id) for event in heard] == [
        ("pool-heard", response.json()["id"])
    ]
