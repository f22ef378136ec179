"""`supportgate audit verify` on SQLite and PostgreSQL: an untouched history passes; editing,
deleting or adding a decision behind the service's back fails, naming the first bad record."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select, text

from supportgate.audit.chain import ChainedFields
from supportgate.audit.verify import verify_chain
from supportgate.cli import main
from supportgate.db import AUDIT_GENESIS_HASH
from supportgate.db import Decision as DecisionRow

from ..api import Api

EXAMPLES = ("hw-b200-pool.yaml", "hw-h100-pool-a.yaml", "dep-h100-port-trial.yaml")
_decisions = DecisionRow.__table__  # type: ignore[attr-defined]


@pytest.fixture
def history(api: Api, examples_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Api:
    """Nine decisions (the examples posted three times over); the CLI on the same database."""
    for _ in range(3):
        for name in EXAMPLES:
            assert api.post_manifest(examples_dir / name).status_code == 201
    assert api.runtime.reevaluation.wait_idle()  # the pool's re-posts sweep its deployment
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", api.runtime.settings.database_url)
    return api


def verify(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["audit", "verify"])
    return code, capsys.readouterr().out.strip()


def sql(api: Api, statement: str, **params: Any) -> None:
    with api.runtime.db.begin() as connection:
        connection.execute(text(statement), params)


def decision_id(api: Api, seq: int) -> str:
    with api.runtime.db.connect() as connection:
        return str(
            connection.execute(select(_decisions.c.id).where(_decisions.c.seq == seq)).scalar_one()
        )


def test_untouched_history_is_intact(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    with history.runtime.db.connect() as connection:
        head = connection.execute(text("SELECT last_hash FROM audit_head")).scalar_one()
    assert verify(capsys) == (0, f"audit chain intact: 9 decisions, head {head}")


def test_empty_history_is_intact(
    api: Api, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", api.runtime.settings.database_url)
    assert verify(capsys) == (0, f"audit chain intact: 0 decisions, head {AUDIT_GENESIS_HASH}")


def test_a_changed_verdict_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(history, "UPDATE decisions SET verdict = 'supported' WHERE seq = 6")
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith(f"audit chain broken at seq 6 (id {decision_id(history, 6)}): ")
    assert "hash does not match its contents" in out


def test_a_changed_document_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(history, "UPDATE decisions SET document = :doc WHERE seq = 3", doc='{"violations": []}')
    code, out = verify(capsys)
    assert code == 1
    assert f"seq 3 (id {decision_id(history, 3)})" in out


def test_a_deleted_decision_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    # seq 2 (h100-pool-a's first decision) is no manifest's latest: deletable despite the keys.
    sql(history, "DELETE FROM decision_rules WHERE decision_seq = 2")
    sql(history, "DELETE FROM decisions WHERE seq = 2")
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith(f"audit chain broken at seq 3 (id {decision_id(history, 3)}): ")
    assert "seq 2 missing before it" in out


def test_a_deleted_last_decision_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(history, "UPDATE manifests SET latest_decision_id = NULL")
    sql(history, "DELETE FROM decision_rules WHERE decision_seq = 9")
    sql(history, "DELETE FROM decisions WHERE seq = 9")
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith("audit chain broken at seq 9: the audit head names seq 9")


def test_a_changed_policy_input_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(
        history,
        "UPDATE decisions SET policy_input = replace(policy_input, '\"sm90\"', '\"sm100\"') "
        "WHERE seq = 5",
    )
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith(f"audit chain broken at seq 5 (id {decision_id(history, 5)}): ")
    assert "policy input does not match its input_digest" in out


def test_a_rehashed_edit_breaks_the_next_link(
    history: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    """An editor who recomputes the edited row's hash is caught by the next row's prev_hash."""
    with history.runtime.db.begin() as connection:
        row = connection.execute(select(_decisions).where(_decisions.c.seq == 4)).mappings().one()
        fields = {name: row[name] for name in ChainedFields.__dataclass_fields__}
        forged = ChainedFields(**{**fields, "verdict": "rejected", "allowed": False}).hash()
        connection.execute(
            _decisions.update()
            .where(_decisions.c.seq == 4)
            .values(verdict="rejected", allowed=False, hash=forged)
        )
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith(f"audit chain broken at seq 5 (id {decision_id(history, 5)}): ")
    assert "is not the hash of seq 4" in out


def test_the_first_bad_record_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(history, "UPDATE decisions SET cause = 'matrix' WHERE seq IN (7, 4)")
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith(f"audit chain broken at seq 4 (id {decision_id(history, 4)}): ")


def test_deleted_rule_rows_are_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    """decision_rules is what ?rule= searches: hiding a decision from it is tampering too."""
    sql(history, "DELETE FROM decision_rules WHERE decision_seq = 8")
    code, out = verify(capsys)
    assert code == 1
    assert f"seq 8 (id {decision_id(history, 8)})" in out
    assert "decision_rules" in out


def test_a_decision_beyond_the_head_is_named(
    history: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    with history.runtime.db.begin() as connection:
        row = connection.execute(select(_decisions).where(_decisions.c.seq == 9)).mappings().one()
        forged_id = str(uuid.uuid4())
        connection.execute(insert(_decisions).values({**row, "seq": 10, "id": forged_id}))
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith(f"audit chain broken at seq 10 (id {forged_id}): ")


def test_a_moved_head_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(history, "UPDATE audit_head SET last_hash = :forged", forged="f" * 64)
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith(f"audit chain broken at seq 9 (id {decision_id(history, 9)}): ")
    assert "audit head's hash" in out


@pytest.mark.parametrize("chunk", [1, 2, 4, 9, 100])
def test_chunked_walks_agree(history: Api, chunk: int) -> None:
    report = verify_chain(history.runtime.sessions, chunk=chunk)
    assert (report.intact, report.decisions) == (True, 9)
    sql(history, "UPDATE decisions SET name = 'renamed' WHERE seq = 9")
    broken = verify_chain(history.runtime.sessions, chunk=chunk)
    assert broken.problem is not None
    assert (broken.problem.seq, broken.decisions) == (9, 8)
