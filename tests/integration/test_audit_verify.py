"""`supportgate audit verify` on SQLite and PostgreSQL, without checkpoints: an untouched log
passes; editing, deleting or adding an entry or a decision row behind the service's back,
without recomputing the tree, fails naming the first bad leaf. (What a recomputed tree hides,
a signed checkpoint catches: test_audit_tamper.py.)"""

from __future__ import annotations

import base64
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select, text

from supportgate.audit.verify import verify_log
from supportgate.cli import main
from supportgate.db import Decision as DecisionRow
from supportgate.db import LedgerEntry
from supportgate.ledger.merkle import EMPTY_ROOT

from ..api import Api

EXAMPLES = ("hw-b200-pool.yaml", "hw-h100-pool-a.yaml", "dep-h100-port-trial.yaml")
_decisions = DecisionRow.__table__  # type: ignore[attr-defined]
_entries = LedgerEntry.__table__  # type: ignore[attr-defined]


@pytest.fixture
def history(api: Api, examples_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Api:
    """The default matrix (leaf 0) and nine decisions (the examples posted three times over,
    leaves 1-9, seqs 1-9); the CLI on the same database."""
    for _ in range(3):
        for name in EXAMPLES:
            assert api.post_manifest(examples_dir / name).status_code == 201
    assert api.runtime.reevaluation.wait_idle()  # the pool's re-posts sweep its deployment
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", api.runtime.settings.database_url)
    return api


def verify(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["audit", "verify"])
    # the last line: a sweep that ends meanwhile may log on stdout before it
    return code, capsys.readouterr().out.strip().splitlines()[-1]


def sql(api: Api, statement: str, **params: Any) -> None:
    with api.runtime.db.begin() as connection:
        connection.execute(text(statement), params)


def decision_id(api: Api, leaf: int) -> str:
    with api.runtime.db.connect() as connection:
        statement = select(_decisions.c.id).where(_decisions.c.leaf_index == leaf)
        return str(connection.execute(statement).scalar_one())


def root_of(api: Api) -> str:
    with api.runtime.db.connect() as connection:
        root = connection.execute(text("SELECT root FROM ledger_head")).scalar_one()
    return base64.b64encode(bytes(root)).decode()


def test_untouched_history_is_intact(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    assert verify(capsys) == (0, f"audit log intact: 10 entries, root {root_of(history)}")


def test_a_new_database_has_the_default_matrix_only(
    api: Api, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", api.runtime.settings.database_url)
    code, out = verify(capsys)
    assert (code, out) == (0, f"audit log intact: 1 entries, root {root_of(api)}")
    assert root_of(api) != base64.b64encode(EMPTY_ROOT).decode()


def test_a_changed_verdict_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(history, "UPDATE decisions SET verdict = 'supported' WHERE leaf_index = 6")
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith(f"audit log broken at leaf 6: decision {decision_id(history, 6)}: ")
    assert "its row differs from its entry" in out


def test_a_changed_document_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(history, "UPDATE decisions SET document = :doc WHERE leaf_index = 3", doc='{"x": 1}')
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith("audit log broken at leaf 3: ")


def test_a_changed_recorded_at_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    with history.runtime.db.begin() as connection:
        connection.execute(
            _decisions.update()
            .where(_decisions.c.leaf_index == 4)
            .values(recorded_at=_decisions.c.evaluated_at)
        )
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith("audit log broken at leaf 4: ")
    assert "recorded_at" in out


def test_a_changed_entry_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(
        history,
        "UPDATE ledger_entries SET entry = replace(entry, '\"experimental\"', '\"supported\"') "
        "WHERE leaf_index = 3",
    )
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith("audit log broken at leaf 3: ")


def test_a_deleted_entry_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(history, "DELETE FROM ledger_entries WHERE leaf_index = 2")
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith("audit log broken at leaf 2: it is missing")


def test_a_deleted_decision_row_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    # leaf 2 (h100-pool-a's first decision) is no manifest's latest: deletable despite the keys.
    sql(history, "DELETE FROM decision_rules WHERE decision_seq = 2")
    sql(history, "DELETE FROM decisions WHERE leaf_index = 2")
    code, out = verify(capsys)
    assert (code, out) == (1, "audit log broken at leaf 2: its decision row is missing")


def test_deleted_last_entries_are_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(history, "DELETE FROM ledger_entries WHERE leaf_index >= 8")
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith("audit log broken at leaf 8: the head names 10 entries")


def test_a_changed_policy_input_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(
        history,
        "UPDATE decisions SET policy_input = replace(policy_input, '\"sm90\"', '\"sm100\"') "
        "WHERE leaf_index = 5",
    )
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith(f"audit log broken at leaf 5: decision {decision_id(history, 5)}: ")
    assert "policy input does not match its input_digest" in out


def test_the_first_bad_leaf_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(history, "UPDATE decisions SET cause = 'matrix' WHERE leaf_index IN (7, 4)")
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith("audit log broken at leaf 4: ")


def test_deleted_rule_rows_are_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    """decision_rules is what ?rule= searches: hiding a decision from it is tampering too."""
    sql(history, "DELETE FROM decision_rules WHERE decision_seq = 8")
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith(f"audit log broken at leaf 8: decision {decision_id(history, 8)}")
    assert "decision_rules" in out


def test_a_decision_beyond_the_head_is_named(
    history: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    with history.runtime.db.begin() as connection:
        row = connection.execute(select(_decisions).where(_decisions.c.seq == 9)).mappings().one()
        forged_id = str(uuid.uuid4())
        connection.execute(
            insert(_decisions).values({**row, "seq": 10, "id": forged_id, "leaf_index": 10})
        )
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith(f"audit log broken at leaf 10: decision {forged_id} names a leaf beyond")


def test_a_moved_head_is_named(history: Api, capsys: pytest.CaptureFixture[str]) -> None:
    sql(history, "UPDATE ledger_head SET root = :forged", forged=b"\xff" * 32)
    code, out = verify(capsys)
    assert (code, out) == (
        1,
        "audit log broken at the head: the head's root is not the root of the stored entries",
    )


@pytest.mark.parametrize("chunk", [1, 2, 4, 10, 100])
def test_chunked_walks_agree(history: Api, chunk: int) -> None:
    report = verify_log(history.runtime.sessions, chunk=chunk)
    assert (report.intact, report.entries) == (True, 10)
    sql(history, "UPDATE decisions SET name = 'renamed' WHERE leaf_index = 9")
    broken = verify_log(history.runtime.sessions, chunk=chunk)
    assert broken.problem is not None
    assert (broken.problem.leaf_index, broken.entries) == (9, 9)
