"""Migration 0005 on SQLite and PostgreSQL: a database of the hash-chain era becomes a log.

The old chain's decisions become the first leaves in seq order, then the matrix versions,
then the waivers created and deleted; every row gets its entry's leaf_index, `audit verify`
passes on the result, and a broken old chain is refused, naming its row. Downgrading brings
the chain back, hash for hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from sqlalchemy import Engine, text

from supportgate.audit.verify import verify_log
from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.db import create_db_engine, session_factory
from supportgate.db.migrate import downgrade, upgrade
from supportgate.manifests import to_builtins
from supportgate.matrix import load_matrix_file, prepare
from supportgate.policy import PolicyBundle
from supportgate.policy.inputs import canonical_digest
from supportgate.tlog import NoteSigner

from ..audit_history import sign_head

AT = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
GENESIS = "0" * 64
DOCUMENT = {
    "violations": [
        {"rule": "support.platform", "severity": "warn", "message": "sm90", "path": "$"}
    ],
    "claims": {"builds": "proven", "correct": "unproven", "performant": "unproven"},
    "checklist": {
        "official_support": False,
        "kernels_and_correctness": "unproven",
        "distributed_performance": "unproven",
        "service_completeness": "external",
    },
    "recommendations": ["pin the toolkit"],
}
CONTENT = {"kind": "HardwareManifest"}
CANONICAL_CONTENT = '{"kind":"HardwareManifest"}'
POLICY_INPUT = f'{{"manifest":{CANONICAL_CONTENT}}}'


def old_chain_hash(row: dict[str, Any], prev_hash: str) -> str:
    """The hash-chain era's row hash, written out here as the oracle: sha256 over the sorted,
    compact JSON of the row's columns and prev_hash, times in RFC 3339 with Z."""
    fields = {k: v for k, v in row.items() if k not in {"recorded_at", "policy_input"}}
    fields["evaluated_at"] = row["evaluated_at"].isoformat().replace("+00:00", "Z")
    fields["prev_hash"] = prev_hash
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def old_decisions(count: int) -> list[dict[str, Any]]:
    return [
        {
            "seq": seq,
            "id": f"decision-{seq}",
            "kind": "HardwareManifest",
            "name": f"pool-{seq % 2}",
            "verdict": "experimental",
            "allowed": True,
            "cause": "submission",
            "matrix_version": "2026.11.1",
            "policy_revision": "sha256:" + "a" * 64,
            "input_digest": "sha256:" + hashlib.sha256(POLICY_INPUT.encode()).hexdigest(),
            "evaluated_at": AT + timedelta(minutes=seq),
            "recorded_at": AT + timedelta(minutes=seq, seconds=1),
            "document": DOCUMENT,
            "policy_input": POLICY_INPUT,
        }
        for seq in range(1, count + 1)
    ]


@pytest.fixture
def old_database(db_url: str) -> Iterator[tuple[str, Engine]]:
    """A database at revision 0004 holding five chained decisions, a matrix version and two
    waivers (one deleted), as the hash-chain era wrote them."""
    upgrade(db_url, "0004")
    engine = create_db_engine(db_url)
    rows, prev = old_decisions(5), GENESIS
    with engine.begin() as connection:
        for row in rows:
            digest = old_chain_hash(row, prev)
            connection.execute(
                text(
                    "INSERT INTO decisions (seq, id, kind, name, verdict, allowed, cause, "
                    "matrix_version, policy_revision, input_digest, evaluated_at, recorded_at, "
                    "document, policy_input, prev_hash, hash) VALUES (:seq, :id, :kind, :name, "
                    ":verdict, :allowed, :cause, :matrix_version, :policy_revision, "
                    ":input_digest, :evaluated_at, :recorded_at, :document, :policy_input, "
                    ":prev_hash, :hash)"
                ),
                {**row, "document": json.dumps(row["document"]), "prev_hash": prev, "hash": digest},
            )
            connection.execute(
                text(
                    "INSERT INTO decision_rules (decision_seq, rule, severity) "
                    "VALUES (:seq, 'support.platform', 'warn')"
                ),
                {"seq": row["seq"]},
            )
            prev = digest
        connection.execute(
            text("UPDATE audit_head SET last_seq = 5, last_hash = :hash"), {"hash": prev}
        )
        matrix = load_matrix_file(PolicyBundle.load(DEFAULT_POLICY_DIR).default_matrix_path)
        connection.execute(
            text(
                "INSERT INTO matrix_versions (version, document, digest, effective_from, "
                "published_at, published_by) VALUES (:version, :document, :digest, "
                ":effective_from, :at, 'admin')"
            ),
            {
                "version": matrix.version,
                "document": json.dumps(to_builtins(matrix)),
                "digest": prepare(matrix).key,
                "effective_from": matrix.effective_from,
                "at": AT,
            },
        )
        for latest in rows[-2:]:  # the tracked manifests, pool-0 and pool-1
            connection.execute(
                text(
                    "INSERT INTO manifests (kind, name, content, content_digest, "
                    "latest_decision_id, latest_verdict, created_at, updated_at, "
                    "last_evaluated_at) VALUES (:kind, :name, :content, :digest, :id, "
                    ":verdict, :created, :recorded_at, :evaluated_at)"
                ),
                {
                    **latest,
                    "content": json.dumps(CONTENT),
                    "digest": canonical_digest(CANONICAL_CONTENT.encode()),
                    "created": next(r for r in rows if r["name"] == latest["name"])["recorded_at"],
                },
            )
        for number, deleted in ((1, None), (2, AT + timedelta(hours=2))):
            connection.execute(
                text(
                    "INSERT INTO waivers (id, rule, kind, name, justification, expires_at, "
                    "created_by, created_at, deleted_at, deleted_by) VALUES (:id, "
                    "'support.platform', 'HardwareManifest', 'pool-0', 'trial', :expires, "
                    "'admin', :created, :deleted, :by)"
                ),
                {
                    "id": f"waiver-{number}",
                    "expires": AT + timedelta(days=30),
                    "created": AT + timedelta(hours=number),
                    "deleted": deleted,
                    "by": "admin" if deleted else None,
                },
            )
    yield db_url, engine
    engine.dispose()


def _column(engine: Engine, sql: str) -> list[Any]:
    with engine.connect() as connection:
        return [row[0] if len(row) == 1 else tuple(row) for row in connection.execute(text(sql))]


def test_the_old_chain_becomes_the_first_leaves(
    old_database: tuple[str, Engine], tmp_path: Path
) -> None:
    url, engine = old_database
    upgrade(url)
    assert _column(engine, "SELECT seq, leaf_index FROM decisions ORDER BY seq") == [
        (seq, seq - 1) for seq in range(1, 6)
    ]
    assert _column(engine, "SELECT leaf_index FROM matrix_versions") == [5]
    assert _column(
        engine, "SELECT id, leaf_index, deleted_leaf_index FROM waivers ORDER BY id"
    ) == [
        ("waiver-1", 6, None),
        ("waiver-2", 7, 8),
    ]
    types = _column(engine, "SELECT type FROM ledger_entries ORDER BY leaf_index")
    assert types == ["decision"] * 5 + ["matrix", "waiver-created", "waiver-created"] + [
        "waiver-deleted"
    ]
    first = msgspec.json.decode(_column(engine, "SELECT entry FROM ledger_entries LIMIT 1")[0])
    assert first["decision"]["id"] == "decision-1"
    assert first["recorded_at"] == "2026-11-20T09:31:01Z"
    assert _column(engine, "SELECT size FROM ledger_head") == [9]
    unsigned = verify_log(session_factory(engine))  # until the service starts and signs
    assert unsigned.problem is not None
    assert unsigned.problem.leaf_index == 0
    assert "no checkpoint covers it" in unsigned.problem.what
    signer = NoteSigner.generate("supportgate/migrated")
    sign_head(session_factory(engine), signer, tmp_path / "witness.txt")
    report = verify_log(session_factory(engine), verifier=signer.verifier())
    assert report.intact, report.summary()
    assert report.entries == 9


def test_a_manifest_untracked_before_the_log_gets_its_entry(
    old_database: tuple[str, Engine], tmp_path: Path
) -> None:
    url, engine = old_database
    with engine.begin() as connection:  # untracked in the hash-chain era: no record of it
        connection.execute(text("DELETE FROM manifests WHERE name = 'pool-1'"))
    upgrade(url)
    last = _column(engine, "SELECT type, entry FROM ledger_entries ORDER BY leaf_index")[-1]
    assert last[0] == "untracked"
    entry = msgspec.json.decode(last[1])
    assert (entry["manifest"], entry["untracked_by"]) == (
        {"kind": "HardwareManifest", "name": "pool-1"},
        None,
    )
    signer = NoteSigner.generate("supportgate/migrated")
    sign_head(session_factory(engine), signer, tmp_path / "witness.txt")
    report = verify_log(session_factory(engine), verifier=signer.verifier())
    assert report.intact, report.summary()
    assert report.entries == 10


def test_a_broken_old_chain_is_refused(old_database: tuple[str, Engine]) -> None:
    url, engine = old_database
    with engine.begin() as connection:
        connection.execute(text("UPDATE decisions SET verdict = 'supported' WHERE seq = 3"))
    with pytest.raises(RuntimeError, match=r"the audit chain is broken at seq 3 \(id decision-3\)"):
        upgrade(url)


def test_downgrading_brings_the_chain_back(old_database: tuple[str, Engine]) -> None:
    url, engine = old_database
    before = _column(engine, "SELECT seq, prev_hash, hash FROM decisions ORDER BY seq")
    head = _column(engine, "SELECT last_seq, last_hash FROM audit_head")
    upgrade(url)
    downgrade(url, "0004")
    assert _column(engine, "SELECT seq, prev_hash, hash FROM decisions ORDER BY seq") == before
    assert _column(engine, "SELECT last_seq, last_hash FROM audit_head") == head
