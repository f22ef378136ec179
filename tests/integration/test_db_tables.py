"""Every table on SQLite and PostgreSQL: rows round-trip, constraints hold, the log is linear."""

from __future__ import annotations

import hashlib
import itertools
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError, StatementError
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session, col, select

from supportgate.db import (
    ApiKey,
    Decision,
    DecisionRule,
    IdempotencyKey,
    LedgerEntry,
    LedgerHead,
    Manifest,
    MatrixVersion,
    create_db_engine,
    session_factory,
    transaction,
)
from supportgate.ledger.entries import untracked_entry
from supportgate.ledger.log import append_entries, lock_head, read_head
from supportgate.tlog import MerkleTree, leaf_hash
from tests.tlog.memory_store import MemoryNodeStore

# An aware time that is not UTC: it must come back as the same instant, in UTC.
CET = timezone(timedelta(hours=1))
AT = datetime(2026, 11, 30, 10, 15, 30, 123456, tzinfo=CET)
DOCUMENT: dict[str, Any] = {
    "violations": [
        {
            "rule": "support.platform",
            "severity": "warn",
            "message": "sm90 ünlisted — 日本",
            "path": "$",
        }
    ],
    "claims": {"builds": "proven", "correct": "unproven", "performant": "unproven"},
    "checklist": {"official_support": False, "service_completeness": "external"},
    "recommendations": ["vllm documents nvidia/sm90"],
    "nested": {"numbers": [1, 2.5, None, True], "empty": {}},
}
_leaves = itertools.count()  # a unique leaf_index for each row made below


@pytest.fixture
def engine(migrated_db_url: str) -> Iterator[Engine]:
    engine = create_db_engine(migrated_db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def sessions(engine: Engine) -> sessionmaker[Session]:
    return session_factory(engine)


def make_decision(**overrides: Any) -> Decision:
    fields: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "kind": "DeploymentManifest",
        "name": "v41-flash-h100-trial",
        "verdict": "experimental",
        "allowed": True,
        "cause": "submission",
        "matrix_version": "2026.11.1",
        "policy_revision": "sha256:" + "a" * 64,
        "input_digest": "sha256:" + "b" * 64,
        "evaluated_at": AT,
        "recorded_at": AT + timedelta(seconds=1),
        "document": DOCUMENT,
        "policy_input": '{"manifest":{"kind":"DeploymentManifest"}}',
        "leaf_index": next(_leaves),
    }
    fields.update(overrides)
    return Decision(**fields)


def make_api_key(**overrides: Any) -> ApiKey:
    fields: dict[str, Any] = {
        "name": "ci-main",
        "role": "ci",
        "key_hash": hashlib.sha256(b"secret").hexdigest(),
        "prefix": "sg_ci_ab",
        "created_at": AT,
    }
    fields.update(overrides)
    return ApiKey(**fields)


def make_matrix_version(**overrides: Any) -> MatrixVersion:
    fields: dict[str, Any] = {
        "version": "2026.11.1",
        "document": {"version": "2026.11.1", "engines": {"deepinfer": {"models": []}}},
        "digest": "sha256:" + "d" * 64,
        "effective_from": AT,
        "published_at": AT,
        "published_by": "admin",
        "leaf_index": next(_leaves),
    }
    fields.update(overrides)
    return MatrixVersion(**fields)


def assert_same_instant_in_utc(got: datetime | None, expected: datetime) -> None:
    assert got is not None
    assert got.tzinfo is UTC
    assert got == expected


def test_decision_and_rules_round_trip(sessions: sessionmaker[Session]) -> None:
    with transaction(sessions) as session:
        decision = make_decision()
        session.add(decision)
        session.flush()
        assert decision.seq is not None
        session.add(
            DecisionRule(decision_seq=decision.seq, rule="support.platform", severity="warn")
        )
        session.add(DecisionRule(decision_seq=decision.seq, rule="port.isolation", severity="deny"))
        decision_id, seq = decision.id, decision.seq

    with sessions() as session:
        got = session.exec(select(Decision).where(Decision.id == decision_id)).one()
        assert got.seq == seq
        assert got.document == DOCUMENT
        assert got.allowed is True
        assert got.policy_input == '{"manifest":{"kind":"DeploymentManifest"}}'
        assert_same_instant_in_utc(got.evaluated_at, AT)
        assert_same_instant_in_utc(got.recorded_at, AT + timedelta(seconds=1))
        rules = session.exec(
            select(DecisionRule.rule, DecisionRule.severity)
            .where(DecisionRule.decision_seq == seq)
            .order_by(DecisionRule.rule)
        ).all()
        assert [tuple(row) for row in rules] == [
            ("port.isolation", "deny"),
            ("support.platform", "warn"),
        ]


def test_decision_seq_increases(sessions: sessionmaker[Session]) -> None:
    with transaction(sessions) as session:
        decisions = [make_decision() for _ in range(3)]
        for decision in decisions:
            session.add(decision)
            session.flush()
        seqs = [decision.seq or 0 for decision in decisions]
    assert all(seq > 0 for seq in seqs)
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == 3


def test_manifest_round_trip(sessions: sessionmaker[Session]) -> None:
    with transaction(sessions) as session:
        decision = make_decision(verdict="rejected", allowed=False)
        session.add(decision)
        session.flush()
        session.add(
            Manifest(
                kind="DeploymentManifest",
                name="v41-flash-h100-trial",
                owner="ml-platform",
                content={"apiVersion": "supportgate/v1", "spec": {"stage": "experimental"}},
                content_digest="sha256:" + "e" * 64,
                hardware_ref="h100-pool-a",
                latest_decision_id=decision.id,
                latest_verdict="rejected",
                created_at=AT,
                updated_at=AT,
                last_evaluated_at=AT,
            )
        )
        session.add(
            Manifest(
                kind="HardwareManifest",
                name="h100-pool-a",
                content={"apiVersion": "supportgate/v1"},
                content_digest="sha256:" + "f" * 64,
                created_at=AT,
                updated_at=AT,
            )
        )

    with sessions() as session:
        got = session.get(Manifest, ("DeploymentManifest", "v41-flash-h100-trial"))
        assert got is not None
        assert got.content == {"apiVersion": "supportgate/v1", "spec": {"stage": "experimental"}}
        assert got.latest_verdict == "rejected"
        assert got.hardware_ref == "h100-pool-a"
        assert_same_instant_in_utc(got.created_at, AT)
        assert_same_instant_in_utc(got.last_evaluated_at, AT)
        bare = session.get(Manifest, ("HardwareManifest", "h100-pool-a"))
        assert bare is not None
        assert bare.owner is None
        assert bare.last_evaluated_at is None
        rejected = session.exec(select(Manifest).where(Manifest.latest_verdict == "rejected"))
        assert [m.name for m in rejected] == ["v41-flash-h100-trial"]


def test_matrix_version_round_trip(sessions: sessionmaker[Session]) -> None:
    with transaction(sessions) as session:
        session.add(make_matrix_version())
        session.add(
            make_matrix_version(version="2026.12.1", effective_from=None, published_by=None)
        )
    with sessions() as session:
        got = session.get(MatrixVersion, "2026.11.1")
        assert got is not None
        assert got.document == {"version": "2026.11.1", "engines": {"deepinfer": {"models": []}}}
        assert_same_instant_in_utc(got.effective_from, AT)
        assert_same_instant_in_utc(got.published_at, AT)
        later = session.get(MatrixVersion, "2026.12.1")
        assert later is not None
        assert later.effective_from is None
        assert later.published_by is None


def test_api_key_and_idempotency_key_round_trip(sessions: sessionmaker[Session]) -> None:
    body = b'{"id":"x","verdict":"supported"}\x00\xff'
    with transaction(sessions) as session:
        key = make_api_key()
        session.add(key)
        session.flush()
        assert key.id is not None
        session.add(
            IdempotencyKey(
                api_key_id=key.id,
                key="retry-123",
                request_digest="sha256:" + "1" * 64,
                status_code=201,
                response_body=body,
                created_at=AT,
            )
        )
        key_id = key.id
        key.revoked_at = AT + timedelta(days=1)

    with sessions() as session:
        got_key = session.get(ApiKey, key_id)
        assert got_key is not None
        assert (got_key.name, got_key.role, got_key.prefix) == ("ci-main", "ci", "sg_ci_ab")
        assert_same_instant_in_utc(got_key.created_at, AT)
        assert_same_instant_in_utc(got_key.revoked_at, AT + timedelta(days=1))
        got = session.get(IdempotencyKey, (key_id, "retry-123"))
        assert got is not None
        assert got.response_body == body
        assert got.status_code == 201
        assert_same_instant_in_utc(got.created_at, AT)


def test_ledger_head_round_trip(sessions: sessionmaker[Session]) -> None:
    with transaction(sessions, write=True) as session:
        head = lock_head(session)
        assert (head.size, head.root) == (0, hashlib.sha256(b"").digest())
        row = session.get(LedgerHead, 1)
        assert row is not None
        row.size = 2**40  # beyond 32 bits: the column is a BIGINT
        row.root = b"\x09" * 32
    with sessions() as session:
        got = read_head(session)
        assert (got.size, got.root) == (2**40, b"\x09" * 32)


Make = Callable[[], Any]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param(
            lambda: make_decision(id="same"), lambda: make_decision(id="same"), id="decision-id"
        ),
        pytest.param(make_api_key, lambda: make_api_key(key_hash="other"), id="api-key-name"),
        pytest.param(make_api_key, lambda: make_api_key(name="other"), id="api-key-hash"),
        pytest.param(make_matrix_version, make_matrix_version, id="matrix-version"),
    ],
)
def test_duplicates_are_refused(sessions: sessionmaker[Session], first: Make, second: Make) -> None:
    with transaction(sessions) as session:
        session.add(first())
    with pytest.raises(IntegrityError), transaction(sessions) as session:
        session.add(second())


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: make_decision(verdict="approved"), id="decision-verdict"),
        pytest.param(lambda: make_decision(cause="manual"), id="decision-cause"),
        pytest.param(lambda: make_api_key(role="root"), id="api-key-role"),
        pytest.param(
            lambda: DecisionRule(decision_seq=999, rule="host.os", severity="deny"),
            id="rule-without-decision",
        ),
        pytest.param(lambda: LedgerHead(id=2, size=0, root=b""), id="second-ledger-head"),
    ],
)
def test_constraints_are_enforced(sessions: sessionmaker[Session], make: Make) -> None:
    with pytest.raises(IntegrityError), transaction(sessions) as session:
        session.add(make())


def test_naive_datetimes_are_refused(sessions: sessionmaker[Session]) -> None:
    with pytest.raises(StatementError, match="naive datetime"), transaction(sessions) as session:
        session.add(make_decision(evaluated_at=datetime(2026, 11, 30, 10, 0)))


def _add_good_then_bad(sessions: sessionmaker[Session]) -> None:
    with transaction(sessions) as session:
        session.add(make_decision(id="kept-out"))
        session.flush()
        session.add(make_decision(verdict="approved"))


def test_a_failed_transaction_writes_nothing(sessions: sessionmaker[Session]) -> None:
    with pytest.raises(IntegrityError):
        _add_good_then_bad(sessions)
    with sessions() as session:
        assert session.exec(select(Decision)).all() == []


def test_times_compare_as_instants(sessions: sessionmaker[Session]) -> None:
    with transaction(sessions) as session:
        session.add(make_decision(id="early", evaluated_at=AT))
        session.add(make_decision(id="late", evaluated_at=AT + timedelta(hours=2)))
    since = (AT + timedelta(hours=1)).astimezone(timezone(timedelta(hours=-7)))
    with sessions() as session:
        found = session.exec(select(Decision.id).where(Decision.evaluated_at >= since)).all()
        assert list(found) == ["late"]


def _append(sessions: sessionmaker[Session], label: str) -> None:
    with transaction(sessions, write=True) as session:
        head = lock_head(session)
        entry = untracked_entry(kind="HardwareManifest", name=label, untracked_by=None, at=AT)
        append_entries(session, head, [entry])


def test_concurrent_appenders_keep_the_log_linear(sessions: sessionmaker[Session]) -> None:
    writers, appends = 6, 8
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for n in range(appends):
                _append(sessions, f"w{worker}-{n}")
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []

    with sessions() as session:
        entries = session.exec(select(LedgerEntry).order_by(col(LedgerEntry.leaf_index))).all()
        head = read_head(session)
        stored = MerkleTree(_store_of(session), head.size)
        leaf_hashes = [stored.leaf_hash(i) for i in range(head.size)]
    assert [entry.leaf_index for entry in entries] == list(range(writers * appends))
    assert len({entry.entry for entry in entries}) == writers * appends
    rebuilt = MerkleTree(MemoryNodeStore())
    rebuilt.append(entry.entry.encode() for entry in entries)
    assert head.size == writers * appends
    assert head.root == rebuilt.root()
    assert leaf_hashes == [leaf_hash(entry.entry.encode()) for entry in entries]


def _store_of(session: Session) -> Any:
    from supportgate.ledger.log import SqlNodeStore  # noqa: PLC0415 - only this helper

    return SqlNodeStore(session)
