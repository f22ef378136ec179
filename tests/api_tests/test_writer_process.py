"""The decision writer as a child process (the default on PostgreSQL; forced here on SQLite
too): commits, idempotency conflicts, the child dying under load, and a clean stop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import signal
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import text

from supportgate.audit.recorder import IdempotencyConflict, IdempotentResponse, Record
from supportgate.audit.verify import verify_log
from supportgate.audit.writer_process import ProcessDecisionRecorder, WriterProcessEnded
from supportgate.auth import Principal
from supportgate.db import transaction
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import decode_manifest
from supportgate.reevaluation import repository as reevaluation_repository
from supportgate.reevaluation.runner import SweepBatchWrite, SweepMemo

from ..api import Api, running_api
from .support import hardware, post, rows

CONCURRENT = 200


@pytest.fixture
def process_api(db_url: str) -> Iterator[Api]:
    with running_api(db_url, decision_writer="process") as running:
        assert isinstance(running.runtime.recorder, ProcessDecisionRecorder)
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


def test_concurrent_decisions_are_committed_in_one_log(process_api: Api) -> None:
    answers = _submit_many(process_api, CONCURRENT)

    assert [getattr(answer, "status", answer) for answer in answers] == [201] * CONCURRENT
    assert rows(process_api).decisions == CONCURRENT
    assert rows(process_api).manifests == CONCURRENT
    report = verify_log(
        process_api.runtime.sessions, verifier=process_api.runtime.checkpointer.verifier()
    )
    assert report.intact
    assert report.entries == CONCURRENT + 1  # and the default matrix
    counted = process_api.client.get("/metrics").text
    assert 'supportgate_decisions_total{cause="submission",verdict="rejected"}' in counted


def test_the_same_idempotency_key_twice_at_once_records_one(process_api: Api) -> None:
    doc = hardware("pool-once")

    def send() -> Any:
        return post(process_api, doc, **{"Idempotency-Key": "build-7"})

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(lambda _: send(), range(8)))

    assert {response.status_code for response in responses} == {201}
    assert len({response.json()["id"] for response in responses}) == 1
    assert rows(process_api).decisions == 1


def test_a_conflict_fails_only_the_conflicting_record(process_api: Api) -> None:
    """Two records claiming one Idempotency-Key, handed over together: the first is written,
    the second fails with IdempotencyConflict, and nothing else is lost."""
    records = [_record(process_api, "pool-c", key="k-1"), _record(process_api, "pool-d", key="k-1")]
    records.append(_record(process_api, "pool-e"))
    futures = [process_api.runtime.recorder.submit(record) for record in records]

    outcomes = [future.exception(timeout=60) for future in futures]

    assert outcomes[0] is None
    assert isinstance(outcomes[1], IdempotencyConflict)
    assert outcomes[2] is None
    assert rows(process_api).decisions == 2
    assert rows(process_api).idempotency_keys == 1


def test_a_killed_writer_fails_what_it_held_and_is_replaced(process_api: Api) -> None:
    recorder = process_api.runtime.recorder
    assert isinstance(recorder, ProcessDecisionRecorder)
    child = recorder._child
    assert child is not None
    os.kill(child._process.pid, signal.SIGKILL)
    child._process.wait()

    answers = _submit_many(process_api, 20)
    failed = [answer for answer in answers if isinstance(answer, BaseException)]
    assert all(isinstance(answer, WriterProcessEnded) for answer in failed)
    before = rows(process_api).decisions
    assert before == len(answers) - len(failed)  # a failure recorded nothing

    # a new writer takes over: every later request is recorded
    def recovered() -> bool:
        again = _submit_many(process_api, 5)
        return all(getattr(answer, "status", None) == 201 for answer in again)

    assert _eventually(recovered)
    assert verify_log(
        process_api.runtime.sessions, verifier=process_api.runtime.checkpointer.verifier()
    ).intact


def test_stop_writes_what_was_submitted(db_url: str) -> None:
    with running_api(db_url, decision_writer="process") as running:
        records = [_record(running, f"pool-{index}") for index in range(50)]
        futures = [running.runtime.recorder.submit(record) for record in records]
    # the service has stopped: everything handed over before was written, nothing failed
    assert [future.exception(timeout=0) for future in futures] == [None] * 50
    running.runtime.db.dispose()
    try:
        assert rows(running).decisions == 50
    finally:
        running.runtime.db.dispose()  # what rows() opened after the service stopped


def _record(api: Api, name: str, *, key: str | None = None) -> Record:
    runtime = api.runtime
    evaluator = Evaluator(runtime.engine, runtime.matrices.current().loaded)
    manifest = decode_manifest(post_body(name), fmt="json")
    evaluation = evaluator.evaluate(Subject(manifest), evaluated_at=datetime.now(UTC))
    claim = None
    if key is not None:
        with runtime.db.connect() as connection:
            key_id = connection.execute(text("SELECT min(id) FROM api_keys")).scalar_one()
        claim = IdempotentResponse(
            api_key_id=key_id, key=key, request_digest="d", status_code=201, body=b"{}"
        )
    return Record(evaluation=evaluation, idempotency=claim)


def _eventually(probe: Any, attempts: int = 100) -> bool:
    return any(probe() for _ in range(attempts))


def test_integers_beyond_64_bits_are_recorded(process_api: Api) -> None:
    """JSON columns take any integer; the hand-over to the writer must too (it once used
    msgpack, which cannot, and a request waited forever)."""
    doc = hardware("pool-huge")
    doc["spec"]["nodes"] = 10**30
    response = post(process_api, doc)

    assert response.status_code == 201, response.text
    assert response.json()["id"]
    assert rows(process_api).decisions == 1
    assert verify_log(
        process_api.runtime.sessions, verifier=process_api.runtime.checkpointer.verifier()
    ).intact


def test_a_sweep_batch_is_written_by_the_writer_process(
    process_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep's batch goes to the child with its hooks (SweepBatchWrite): the child admits
    only records whose manifest is as the sweep read it, appends them, moves the tracked
    manifests, memos and the sweep's cursor in the same transaction; nothing is written in
    the service's own process."""
    for name in ("pool-a", "pool-b"):
        assert post(process_api, hardware(name)).status_code == 201
    runtime = process_api.runtime
    with runtime.db.connect() as connection:
        heads = {
            name: (digest, latest)
            for name, digest, latest in connection.execute(
                text("SELECT name, content_digest, latest_decision_id FROM manifests")
            )
        }
    now = datetime.now(UTC)
    with transaction(runtime.sessions, write=True) as session:
        sweep_id = reevaluation_repository.insert_sweep(
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
    records = [_record(process_api, "pool-a"), _record(process_api, "pool-b")]
    hooks = SweepBatchWrite(
        sweep_id=sweep_id,
        expected=[
            ("HardwareManifest", "pool-a", *heads["pool-a"]),
            ("HardwareManifest", "pool-b", "a digest pool-b no longer has", heads["pool-b"][1]),
        ],
        unchanged=[],
        memos=[SweepMemo("HardwareManifest", name, f"memo-{name}", None) for name in heads],
        cursor=("HardwareManifest", "pool-b"),
        touched_at=now,
        evaluated=2,
        failed=0,
    )

    def not_here(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("a sweep batch was appended in the service's process")

    monkeypatch.setattr("supportgate.audit.recorder.append_records", not_here)
    appended = runtime.recorder.write(records, hooks=hooks)

    assert [record.evaluation.decision.id for record in appended] == [
        records[0].evaluation.decision.id
    ]
    with runtime.db.connect() as connection:
        found = connection.execute(text("SELECT name, latest_decision_id FROM manifests"))
        latest: dict[str, str] = dict(found.all())
        memos = [row[0] for row in connection.execute(text("SELECT name FROM sweep_memos"))]
        sweep = connection.execute(
            text("SELECT cursor_name, evaluated, changed FROM sweeps WHERE id = :id"),
            {"id": sweep_id},
        ).one()
    assert latest == {"pool-a": records[0].evaluation.decision.id, "pool-b": heads["pool-b"][1]}
    assert memos == ["pool-a"]  # a dropped record's memo is not saved
    assert tuple(sweep) == ("pool-b", 2, 1)
    assert rows(process_api).decisions == 3
    report = verify_log(runtime.sessions, verifier=runtime.checkpointer.verifier())
    assert report.intact, report.summary()
