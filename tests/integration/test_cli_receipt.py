"""`supportgate audit receipt` and `verify-receipt` on SQLite and PostgreSQL: a decision's
receipt verifies offline (no database, no server) against the log's key, given apart from the
receipt (`--verifier-key` or SUPPORTGATE_VERIFIER_KEY; without one: exit 2 naming the option);
a decision newer than the latest checkpoint is signed first; each edit of a receipt fails,
naming what; a receipt re-signed by another key never holds (CONTRACT 11.3)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from supportgate.cli import main
from supportgate.tlog import Checkpoint, MerkleTree, NoteSigner, sign_checkpoint
from tests.tlog.memory_store import MemoryNodeStore

from ..api import Api, running_api
from ..api_tests.support import post_examples
from ..signing import key_env

Receipt = dict[str, Any]


@pytest.fixture
def quiet_api(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    """The API with the examples posted, whose checkpointer signs only when asked (and at
    start); the CLI on the same database and key."""
    with running_api(db_url, checkpoint_interval=3600.0) as api:
        post_examples(api)
        assert api.runtime.reevaluation.wait_idle()
        monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", db_url)
        monkeypatch.setenv("SUPPORTGATE_LOG_ORIGIN", api.runtime.settings.log_origin)
        for variable, value in key_env(db_url).items():
            monkeypatch.setenv(variable, value)
        yield api


def newest_decision(api: Api) -> dict[str, Any]:
    response = api.client.get("/v1/audit", params={"limit": 1}, headers=api.headers("admin"))
    item: dict[str, Any] = response.json()["items"][0]
    return item


def receipt_of(
    decision_id: str, out: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[Receipt, str]:
    assert main(["audit", "receipt", decision_id, "--out", str(out)]) == 0
    said = capsys.readouterr()
    loaded: Receipt = json.loads(out.read_text())
    return loaded, said.err


def verify_receipt(path: Path, capsys: pytest.CaptureFixture[str], *key: str) -> tuple[int, str]:
    code = main(["audit", "verify-receipt", str(path), *(("--verifier-key", *key) if key else ())])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_receipt_verifies_offline(
    quiet_api: Api,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decision = newest_decision(quiet_api)
    out = tmp_path / "receipt.json"
    receipt, said = receipt_of(decision["id"], out, capsys)
    assert set(receipt) == {
        "entry",
        "leaf_index",
        "tree_size",
        "hashes",
        "checkpoint",
        "verifier_key",
    }
    assert receipt["leaf_index"] == decision["leaf_index"]
    assert json.loads(receipt["entry"])["decision"]["id"] == decision["id"]
    # The latest checkpoint was the start's: the receipt signed one that covers the decision.
    assert f"signed one of {receipt['tree_size']} entries" in said
    assert receipt["tree_size"] > decision["leaf_index"]
    log_key = quiet_api.runtime.checkpointer.verifier().encoded()
    assert receipt["verifier_key"] == log_key
    second, said = receipt_of(decision["id"], tmp_path / "again.json", capsys)
    assert said == ""  # covered by the latest checkpoint now: nothing signed
    assert second == receipt

    # Offline: no database, no server; the key from the option or the environment.
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", f"sqlite:///{tmp_path / 'absent.db'}")
    code, out_text = verify_receipt(out, capsys, log_key)
    assert code == 0, out_text
    assert f"leaf {decision['leaf_index']} is in the log's checkpoint of" in out_text
    assert log_key in out_text
    monkeypatch.setenv("SUPPORTGATE_VERIFIER_KEY", log_key)
    code, out_text = verify_receipt(out, capsys)
    assert code == 0, out_text
    assert not (tmp_path / "absent.db").exists()


def _edit_entry(receipt: Receipt) -> None:
    receipt["entry"] = receipt["entry"].replace('"verdict":"', '"verdict":"x')


def _move_leaf(receipt: Receipt) -> None:
    receipt["leaf_index"] -= 1


def _flip_hash(receipt: Receipt) -> None:
    raw = bytearray(base64.b64decode(receipt["hashes"][0]))
    raw[0] ^= 1
    receipt["hashes"][0] = base64.b64encode(raw).decode()


def _drop_hash(receipt: Receipt) -> None:
    receipt["hashes"].pop()


def _edit_checkpoint_size(receipt: Receipt) -> None:
    size = receipt["tree_size"]
    receipt["checkpoint"] = receipt["checkpoint"].replace(f"\n{size}\n", f"\n{size + 1}\n", 1)
    receipt["tree_size"] = size + 1


def _claim_another_size(receipt: Receipt) -> None:
    receipt["tree_size"] += 1


TAMPERED: list[tuple[Callable[[Receipt], None], str]] = [
    (_edit_entry, "hashes: the entry is not leaf"),
    (_move_leaf, "the entry is not leaf"),
    (_flip_hash, "hashes: the entry is not leaf"),
    (_drop_hash, "hashes: the entry is not leaf"),
    (_edit_checkpoint_size, "does not verify"),
    (_claim_another_size, "tree_size: the checkpoint is of"),
]


def test_an_edited_receipt_fails_naming_what(
    quiet_api: Api, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    decision = newest_decision(quiet_api)
    receipt, _ = receipt_of(decision["id"], tmp_path / "receipt.json", capsys)
    assert receipt["hashes"], "a receipt with hashes to flip"
    log_key = receipt["verifier_key"]
    for tamper, complaint in TAMPERED:
        edited = json.loads(json.dumps(receipt))
        tamper(edited)
        path = tmp_path / f"{tamper.__name__}.json"
        path.write_text(json.dumps(edited))
        code, said = verify_receipt(path, capsys, log_key)
        assert code == 1, (tamper.__name__, said)
        assert "does not hold" in said, tamper.__name__
        assert complaint in said, (tamper.__name__, said)


def test_a_receipt_signed_by_another_key_never_holds(
    quiet_api: Api,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whoever forges an entry can sign a tree of it with a key of their own and put that key
    in the receipt: without a key given apart, nothing is checked (exit 2 naming the option,
    where it used to exit 0 on the receipt's own key); with the log's key it fails."""
    decision = newest_decision(quiet_api)
    receipt, _ = receipt_of(decision["id"], tmp_path / "receipt.json", capsys)
    forged_entry = receipt["entry"].replace('"allowed":false', '"allowed":true')
    tree = MerkleTree(MemoryNodeStore())
    tree.append([forged_entry.encode()])
    origin = quiet_api.runtime.settings.log_origin
    forger = NoteSigner.generate(origin)
    forged = {
        "entry": forged_entry,
        "leaf_index": 0,
        "tree_size": 1,
        "hashes": [],
        "checkpoint": sign_checkpoint(Checkpoint(origin, 1, tree.root()), forger),
        "verifier_key": forger.verifier().encoded(),
    }
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged))
    monkeypatch.delenv("SUPPORTGATE_VERIFIER_KEY", raising=False)
    code, said = verify_receipt(path, capsys)
    assert code == 2, said
    assert "--verifier-key" in said
    assert "SUPPORTGATE_VERIFIER_KEY" in said
    assert "holds" not in said
    code, said = verify_receipt(path, capsys, receipt["verifier_key"])
    assert code == 1
    assert f"verifier_key: the receipt names the key {forger.verifier().encoded()}" in said
    monkeypatch.setenv("SUPPORTGATE_VERIFIER_KEY", receipt["verifier_key"])
    assert verify_receipt(path, capsys)[0] == 1
    forged["verifier_key"] = receipt["verifier_key"]  # claims the log's key: the signature fails
    path.write_text(json.dumps(forged))
    code, said = verify_receipt(path, capsys, receipt["verifier_key"])
    assert code == 1
    assert "no signature by" in said


def test_a_receipt_that_is_not_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = NoteSigner.generate("supportgate/test").verifier().encoded()
    path = tmp_path / "receipt.json"
    path.write_text("{not json")
    assert verify_receipt(path, capsys, key)[0] == 1
    path.write_text(json.dumps({"entry": "{}"}))
    code, said = verify_receipt(path, capsys, key)
    assert code == 1
    assert "receipt: Object missing required field" in said
    code, said = verify_receipt(tmp_path / "absent.json", capsys, key)
    assert code == 2
    assert "cannot read the receipt" in said
    code, said = verify_receipt(path, capsys, "not-a-key")
    assert code == 2
    assert "--verifier-key" in said


def test_a_receipt_of_an_unknown_decision_is_refused(
    quiet_api: Api, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", "receipt", "no-such-id", "--out", str(tmp_path / "r.json")]) == 2
    assert "DECISION_ID: no decision has id 'no-such-id'" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
