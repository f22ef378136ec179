"""`supportgate audit verify` and `audit rebuild-tracking` on SQLite and PostgreSQL.

On a copy of a signed history (tests/audit_history.py): the checkpoints and the keys (the
witness file, the stored checkpoints, the verifier key given, derived from the service's
key or missing), the unsigned tail, the stored tree, and every row derived from the log
(decisions, matrix versions, waivers, tracked manifests), each edited without recomputing
anything and named by its leaf. What a recomputed tree hides, a checkpoint catches:
test_audit_tamper.py.
"""

# ruff: noqa: S608 - the edits are SQL text on purpose: what sqlite3 and psql are fed

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.audit.checkpoints import Note, witness_notes
from supportgate.audit.verify import LogReport, verify_log
from supportgate.cli import main
from supportgate.db import LedgerEntry, create_db_engine, session_factory
from supportgate.tlog import (
    EMPTY_ROOT,
    Checkpoint,
    NoteSigner,
    NoteVerifier,
    open_checkpoint,
    sign_checkpoint,
)

from ..api import Api
from ..audit_history import ORIGIN, WAIVED, History
from ..clock import FakeClock
from ..tamper import hash_literal, leaves, quoted, run_sql, scalar, time_literal

_entries = LedgerEntry.__table__  # type: ignore[attr-defined]


def verify(capsys: pytest.CaptureFixture[str], *options: str) -> tuple[int, str]:
    code = main(["audit", "verify", *options])
    return code, capsys.readouterr().out.strip()


def verify_log_of(history: History, **options: Any) -> LogReport:
    engine = create_db_engine(history.url)
    try:
        return verify_log(
            session_factory(engine), verifier=NoteVerifier.from_key(history.verifier_key), **options
        )
    finally:
        engine.dispose()


def decision_at(history: History, leaf: int) -> dict[str, Any]:
    return next(found for found in leaves(history.url) if found["leaf_index"] == leaf)


def recorded_at(history: History, leaf: int | None = None) -> datetime:
    """When leaf `leaf` was recorded (None: the latest)."""
    column = _entries.c.recorded_at
    statement = (
        select(func.max(column))
        if leaf is None
        else select(column).where(_entries.c.leaf_index == leaf)
    )
    engine = create_db_engine(history.url)
    try:
        with engine.connect() as connection:
            found: datetime = connection.execute(statement).scalar_one()
        return found
    finally:
        engine.dispose()


def root_of(history: History) -> str:
    root = scalar(history.url, "SELECT root FROM ledger_head")
    return base64.b64encode(bytes(root)).decode()


def checkpoint_root(history: History, index: int) -> bytes:
    """The root of the history's checkpoint `index` (0: the first signed)."""
    return witness_checkpoints(history)[index].root_hash


def witness_checkpoints(history: History) -> list[Checkpoint]:
    verifier = NoteVerifier.from_key(history.verifier_key)
    return [open_checkpoint(note.text, verifier) for note in witness_notes(history.witness)]


def key_name(history: History) -> str:
    return "+".join(history.verifier_key.split("+")[:2])


# -- the checkpoints and the keys -----------------------------------------------------------------


def test_an_untouched_history_is_intact(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    size = history.checkpoints[1]
    assert verify(capsys) == (
        0,
        f"audit log intact: {size} entries, root {root_of(history)}; 2 checkpoints agree "
        f"(signed by {key_name(history)}), the largest of size {size}",
    )


def test_the_witness_file_and_a_key_file(
    history: History, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key_file = tmp_path / "verifier.key"
    key_file.write_text(history.verifier_key + "\n")
    run_sql(history.url, "DELETE FROM ledger_checkpoints;")  # only the witness's are read
    code, out = verify(
        capsys, "--checkpoints", str(history.witness), "--verifier-key", str(key_file)
    )
    assert code == 0, out
    size = history.checkpoints[1]
    assert out.endswith(
        f"2 checkpoints agree (signed by {key_name(history)}), the largest of size {size}"
    )


def test_the_key_beside_the_sqlite_file_is_the_default(
    history: History, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not history.url.startswith("sqlite"):
        pytest.skip("the default key lies beside a SQLite file")
    monkeypatch.delenv("SUPPORTGATE_SIGNING_KEY_FILE")
    beside = Path(history.url.removeprefix("sqlite:///")).with_name("supportgate-signing.key")
    beside.write_text(history.key_file.read_text())
    code, out = verify(capsys)
    assert code == 0, out
    assert f"(signed by {key_name(history)})" in out


def test_without_a_verifier_key_the_signatures_are_not_checked(
    history: History, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SUPPORTGATE_SIGNING_KEY_FILE")
    code, out = verify(capsys)
    assert code == 2
    assert out.startswith(f"audit log not verified: {history.checkpoints[1]} entries, root ")
    assert out.endswith(
        "2 checkpoints agree, the largest of size "
        f"{history.checkpoints[1]}, but their signatures were not checked: no verifier key "
        "(pass --verifier-key, or set SUPPORTGATE_SIGNING_KEY_FILE to the service's key)"
    )


def test_another_key_is_refused_naming_the_checkpoint(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    other = NoteSigner.generate(ORIGIN).verifier().encoded()
    code, out = verify(capsys, "--checkpoints", str(history.witness), "--verifier-key", other)
    assert code == 1
    assert out.startswith(
        f"audit log broken at checkpoint 1 of {history.witness}: it is not a checkpoint of "
        f"this log: note: no signature by {'+'.join(other.split('+')[:2])}"
    )


def test_a_key_for_another_log_is_refused(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    other = NoteSigner.generate("someone/else").verifier().encoded()
    code, out = verify(capsys, "--verifier-key", other)
    assert code == 1
    assert out.startswith(
        f"audit log broken at the stored checkpoint of size {history.checkpoints[0]}: it is "
        "not a checkpoint of this log: "
    )


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--verifier-key", "not-a-key", "--verifier-key: neither a verifier key"),
        ("--verifier-key", "name+0000000a+AQ==", "verifier_key: "),
        ("--checkpoints", "missing.txt", "--checkpoints: cannot read missing.txt"),
    ],
)
def test_unusable_options_are_input_errors(
    history: History, option: str, value: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", "verify", option, value]) == 2
    assert capsys.readouterr().err.startswith(f"supportgate: error: {says}")


def test_a_witness_note_without_signatures_is_refused(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    history.witness.write_text(history.witness.read_text() + f"\n{ORIGIN}\n3\nAAAA\n")
    assert main(["audit", "verify", "--checkpoints", str(history.witness)]) == 2
    assert "note 3 has no signature lines after its body" in capsys.readouterr().err


def test_a_signed_checkpoint_of_another_tree_is_named(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    """The service's key signed a root at a size no other checkpoint has, that this log does
    not have there: the database was changed after it was signed, or the key signed a tree
    the database never held."""
    signer = NoteSigner.from_key(history.key_file.read_text())
    size = history.checkpoints[0] + 1
    root = b"\x07" * 32
    agreed = base64.b64encode(checkpoint_root(history, 0)).decode()
    other = sign_checkpoint(Checkpoint(ORIGIN, size, root), signer)
    history.witness.write_text(other + "\n" + history.witness.read_text())
    code, out = verify(capsys, "--checkpoints", str(history.witness))
    assert code == 1
    assert out.startswith(
        f"audit log broken at the checkpoint of size {size} (root "
        f"{base64.b64encode(root).decode()}; checkpoint 1 of {history.witness}): "
        f"the log's root at size {size} is "
    )
    assert out.endswith(
        f"an entry at or after leaf {history.checkpoints[0]} was changed, added or deleted "
        "since it was signed (the checkpoint of size "
        f"{history.checkpoints[0]} (root {agreed}; checkpoint 2 of {history.witness}) still "
        "agrees)"
    )


def test_two_checkpoints_of_one_size_are_a_fork(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two checkpoints of one size with other roots, both signed by the log's key: the key
    signed two histories (a split view: each reader can be shown its own). Named a fork, both
    checkpoints with it, whatever the database holds; once caught, but not called one."""
    signer = NoteSigner.from_key(history.key_file.read_text())
    size = history.checkpoints[0]
    root = b"\x07" * 32
    forked = sign_checkpoint(Checkpoint(ORIGIN, size, root), signer)
    history.witness.write_text(history.witness.read_text() + "\n" + forked)
    code, out = verify(capsys, "--checkpoints", str(history.witness))
    assert code == 1
    signed = base64.b64encode(checkpoint_root(history, 0)).decode()
    assert out == (
        f"audit log broken at the checkpoint of size {size} (root {signed}; checkpoint 1 of "
        f"{history.witness}): a fork: the checkpoint of size {size} (root "
        f"{base64.b64encode(root).decode()}; checkpoint 3 of {history.witness}) is signed for "
        "the same size with another root, so the log's key signed two different histories "
        "(each reader may have been shown its own); at most one of them is this database's"
    )


def test_an_edited_stored_checkpoint_row_is_named(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    size = history.checkpoints[0]
    run_sql(history.url, f"UPDATE ledger_checkpoints SET tree_size = 3 WHERE tree_size = {size};")
    assert verify(capsys) == (
        1,
        "audit log broken at the stored checkpoint of size 3: it is not a checkpoint of this "
        f"log: its note is signed for tree size {size} (the row was edited)",
    )


def test_leaves_no_checkpoint_covers(history: History) -> None:
    """The newest checkpoint gone: its leaves are a tail the service has not signed yet,
    which is fine for UNSIGNED_GRACE and not after."""
    first, size = history.checkpoints
    run_sql(history.url, f"DELETE FROM ledger_checkpoints WHERE tree_size = {size};")
    last = recorded_at(history)
    grace = last - recorded_at(history, first) + timedelta(seconds=1)
    fresh = verify_log_of(history, clock=FakeClock(last), grace=grace)
    assert fresh.intact, fresh.summary()
    assert fresh.summary().endswith(
        f"1 checkpoint agrees (signed by {key_name(history)}), the largest of size {first}; "
        f"the last {size - first} were recorded in the last {grace.total_seconds():g} s and "
        "are not signed yet"
    )
    old = verify_log_of(history, clock=FakeClock(last + grace + timedelta(seconds=1)), grace=grace)
    assert old.problem is not None
    assert old.summary().startswith(
        f"audit log broken at leaf {first}: no checkpoint covers it, though it was recorded at "
    )


def test_a_leaf_recorded_in_the_future_is_named(history: History) -> None:
    found = verify_log_of(history, clock=FakeClock(recorded_at(history, 0) - timedelta(hours=1)))
    assert found.problem is not None
    assert found.summary().startswith("audit log broken at leaf 0: it was recorded at ")
    assert found.summary().endswith(", in the future")


class _PostingOnTheSecondSession(sessionmaker[Session]):
    """Sessions of the API's database; handing out the second (verify_log's first chunk,
    after the one that read the head) posts a manifest first."""

    def __init__(self, api: Api, manifest: Path) -> None:
        super().__init__(bind=api.runtime.db, class_=Session, expire_on_commit=False)
        self.api, self.manifest, self.handed_out = api, manifest, 0

    def __call__(self, **options: Any) -> Session:
        self.handed_out += 1
        if self.handed_out == 2:
            assert self.api.post_manifest(self.manifest).status_code == 201
        return super().__call__(**options)


def test_a_live_database_verifies(sqlite_api: Api, tmp_path: Path, examples_dir: Path) -> None:
    """Entries appended while the walk runs are left for the next run, and the tracking
    state follows them, so the tracked manifest they moved still agrees."""
    deployment = examples_dir / "dep-b200-offline.yaml"
    for path in (examples_dir / "hw-b200-pool.yaml", deployment):
        assert sqlite_api.post_manifest(path).status_code == 201
    sqlite_api.runtime.checkpointer.sign_now()  # the service signs its head
    sessions = _PostingOnTheSecondSession(sqlite_api, deployment)
    walked = verify_log(sessions, verifier=sqlite_api.runtime.checkpointer.verifier(), chunk=1)
    assert sessions.handed_out > 2
    assert walked.intact, walked.summary()
    assert walked.entries == 3  # the decision posted meanwhile is the next run's


# -- the plain checks: an edit that recomputes nothing names its leaf -----------------------------


def test_a_changed_verdict_is_named(history: History, capsys: pytest.CaptureFixture[str]) -> None:
    found = leaves(history.url, verdict="rejected")[0]
    run_sql(history.url, f"UPDATE decisions SET verdict = 'supported' WHERE seq = {found['seq']};")
    assert verify(capsys) == (
        1,
        f"audit log broken at leaf {found['leaf_index']}: decision {found['id']}: its row "
        "differs from its entry in decision.verdict (edited after it was recorded)",
    )


def test_a_changed_document_is_named(history: History, capsys: pytest.CaptureFixture[str]) -> None:
    run_sql(history.url, "UPDATE decisions SET document = '{\"x\": 1}' WHERE leaf_index = 3;")
    code, out = verify(capsys)
    assert code == 1
    assert out == (
        f"audit log broken at leaf 3: decision {decision_at(history, 3)['id']}: its row differs "
        "from its entry in decision.checklist, decision.claims, decision.recommendations, "
        "decision.violations, decision.x (edited after it was recorded); its decision_rules rows "
        "do not match its violations"
    )


def test_a_changed_entry_is_named(history: History, capsys: pytest.CaptureFixture[str]) -> None:
    run_sql(
        history.url,
        "UPDATE ledger_entries SET entry = replace(entry, '\"experimental\"', '\"supported\"') "
        "WHERE leaf_index = 2;",
    )
    code, out = verify(capsys)
    assert (code, out) == (
        1,
        "audit log broken at leaf 2: its stored leaf hash is not the hash of its entry (the "
        "entry was edited after it was appended)",
    )


def test_a_deleted_decision_row_is_named(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    # leaf 2 (h100-pool-a's first decision) is no manifest's latest: deletable despite the keys
    run_sql(
        history.url,
        "DELETE FROM decision_rules WHERE decision_seq = 2; DELETE FROM decisions WHERE seq = 2;",
    )
    assert verify(capsys) == (1, "audit log broken at leaf 2: its decision row is missing")


def test_deleted_last_entries_are_named(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    size = history.checkpoints[1]
    run_sql(history.url, f"DELETE FROM ledger_entries WHERE leaf_index >= {size - 2};")
    assert verify(capsys) == (
        1,
        f"audit log broken at leaf {size - 2}: the head names {size} entries, but the log "
        f"ends at {size - 2} (the last entries were deleted)",
    )


def test_the_first_bad_leaf_is_named(history: History, capsys: pytest.CaptureFixture[str]) -> None:
    run_sql(history.url, "UPDATE decisions SET cause = 'matrix' WHERE leaf_index IN (12, 4);")
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith("audit log broken at leaf 4: ")


def test_deleted_rule_rows_are_named(history: History, capsys: pytest.CaptureFixture[str]) -> None:
    """decision_rules is what ?rule= searches: hiding a decision from it is tampering too."""
    found = next(
        d
        for d in leaves(history.url)
        if scalar(
            history.url, f"SELECT count(*) FROM decision_rules WHERE decision_seq = {d['seq']}"
        )
    )
    run_sql(history.url, f"DELETE FROM decision_rules WHERE decision_seq = {found['seq']};")
    assert verify(capsys) == (
        1,
        f"audit log broken at leaf {found['leaf_index']}: decision {found['id']}: its "
        "decision_rules rows do not match its violations",
    )


def test_a_decision_beyond_the_head_is_named(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    size = history.checkpoints[1]
    run_sql(
        history.url,
        f"""
INSERT INTO decisions (seq, id, kind, name, verdict, allowed, cause, matrix_version,
    policy_revision, input_digest, evaluated_at, recorded_at, document, policy_input, leaf_index)
SELECT seq + 1000, 'forged', kind, name, verdict, allowed, cause, matrix_version,
    policy_revision, input_digest, evaluated_at, recorded_at, document, policy_input, {size}
FROM decisions WHERE leaf_index = 1;
""",
    )
    assert verify(capsys) == (
        1,
        f"audit log broken at leaf {size}: decision forged names a leaf beyond the head (not "
        "appended by supportgate)",
    )


def test_a_decision_naming_another_entry_is_named(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    found = decision_at(history, 3)
    run_sql(history.url, "UPDATE decisions SET leaf_index = 0 WHERE leaf_index = 3;")
    assert verify(capsys) == (
        1,
        f"audit log broken at leaf 0: decision {found['id']} names it, but it is a 'matrix' entry",
    )


def test_a_moved_head_is_named(history: History, capsys: pytest.CaptureFixture[str]) -> None:
    literal = hash_literal(history.url, 0xFF)
    run_sql(history.url, f"UPDATE ledger_head SET root = {literal};")
    assert verify(capsys) == (
        1,
        "audit log broken at the head: the head's root is not the root of the stored entries",
    )


@pytest.mark.parametrize(("level", "index"), [(0, 5), (2, 1)])
@pytest.mark.parametrize("edit", ["changed", "deleted"])
def test_an_edited_tree_node_is_named(
    history: History, level: int, index: int, edit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stored nodes serve the proofs: one that is not the hash of its leaves is named."""
    zeros = hash_literal(history.url, 0)
    where = f"WHERE level = {level} AND idx = {index}"
    run_sql(
        history.url,
        f"UPDATE ledger_nodes SET hash = {zeros} {where};"
        if edit == "changed"
        else f"DELETE FROM ledger_nodes {where};",
    )
    code, out = verify(capsys)
    assert code == 1
    edited = "(the stored tree was edited: proofs served from it would not verify)"
    expected = {
        (0, "changed"): f"audit log broken at leaf {index}: its stored leaf hash is not the "
        "hash of its entry (the entry was edited after it was appended)",
        (0, "deleted"): f"audit log broken at leaf {index}: no leaf hash is stored for it (the "
        "stored tree was edited)",
        (2, "changed"): f"audit log broken at the stored tree node (level 2, index 1): it is not "
        f"the hash of leaves 4 to 7 {edited}",
        (2, "deleted"): f"audit log broken at the stored tree node (level 2, index 1): it is "
        f"missing {edited}",
    }
    assert out == expected[level, edit]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 100])
def test_chunked_walks_agree(history: History, chunk: int) -> None:
    notes = witness_notes(history.witness)
    intact = verify_log_of(history, notes=notes, chunk=chunk)
    assert intact.intact, intact.summary()
    assert (intact.entries, intact.checkpoints) == (history.checkpoints[1], 2)
    found = decision_at(history, 9)
    run_sql(history.url, "UPDATE decisions SET name = 'renamed' WHERE leaf_index = 9;")
    broken = verify_log_of(history, notes=notes, chunk=chunk)
    assert broken.problem is not None
    assert broken.summary() == (
        f"audit log broken at leaf 9: decision {found['id']}: its row differs from its entry "
        "in decision.manifest (edited after it was recorded)"
    )


# -- matrix versions and waivers ------------------------------------------------------------------


def test_an_edited_effective_from_is_named(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    later = time_literal(history.url, datetime(2030, 1, 1, tzinfo=UTC))
    run_sql(history.url, f"UPDATE matrix_versions SET effective_from = {later};")
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith("audit log broken at leaf 0: matrix version ")
    assert out.endswith("its effective_from is not its document's")


def test_a_deleted_matrix_version_is_named(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    run_sql(history.url, "DELETE FROM matrix_versions;")
    assert verify(capsys) == (1, "audit log broken at leaf 0: its matrix version row is missing")


def test_a_matrix_version_without_its_entry_is_named(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    run_sql(
        history.url,
        """
INSERT INTO matrix_versions (version, document, digest, effective_from, published_at,
    published_by, leaf_index)
SELECT '2099.1.1', document, digest, effective_from, published_at, published_by, 1
FROM matrix_versions;
""",
    )
    assert verify(capsys) == (
        1,
        "audit log broken at leaf 1: matrix version 2099.1.1 names it, but it is a 'decision' "
        "entry",
    )


def waiver_leaves(history: History) -> tuple[int, str, int]:
    """The active waiver: its leaf and id; the leaf of the deleted one's deletion."""
    active = int(scalar(history.url, "SELECT leaf_index FROM waivers WHERE deleted_at IS NULL"))
    waiver_id = str(scalar(history.url, f"SELECT id FROM waivers WHERE leaf_index = {active}"))
    deletion = int(
        scalar(history.url, "SELECT deleted_leaf_index FROM waivers WHERE deleted_at IS NOT NULL")
    )
    return active, waiver_id, deletion


def test_an_edited_waiver_is_named(history: History, capsys: pytest.CaptureFixture[str]) -> None:
    leaf, waiver_id, _ = waiver_leaves(history)
    run_sql(history.url, f"UPDATE waivers SET justification = 'none' WHERE leaf_index = {leaf};")
    assert verify(capsys) == (
        1,
        f"audit log broken at leaf {leaf}: waiver {waiver_id}: its row differs from its entry "
        "in waiver.justification (edited after it was recorded)",
    )


def test_a_deleted_waiver_row_is_named(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    leaf, _, _ = waiver_leaves(history)
    run_sql(history.url, f"DELETE FROM waivers WHERE leaf_index = {leaf};")
    assert verify(capsys) == (1, f"audit log broken at leaf {leaf}: its waiver row is missing")


def test_a_waiver_deleted_behind_the_log_is_named(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    leaf, waiver_id, _ = waiver_leaves(history)
    now = time_literal(history.url, datetime.now(UTC))
    run_sql(
        history.url,
        f"UPDATE waivers SET deleted_at = {now}, deleted_by = 'someone' WHERE leaf_index = {leaf};",
    )
    assert verify(capsys) == (
        1,
        f"audit log broken: waiver {waiver_id} is marked deleted, but no waiver-deleted entry "
        "records it",
    )


def test_a_waiver_undeleted_behind_the_log_is_named(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, deletion = waiver_leaves(history)
    waiver_id = scalar(history.url, "SELECT id FROM waivers WHERE deleted_at IS NOT NULL")
    run_sql(history.url, "UPDATE waivers SET deleted_at = NULL, deleted_by = NULL;")
    assert verify(capsys) == (
        1,
        f"audit log broken at leaf {deletion}: waiver {waiver_id}: its row is not marked deleted",
    )


# -- the tracked-manifest table -------------------------------------------------------------------


def test_tracked_manifest_edits_are_named_and_rebuilt(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    earlier = time_literal(history.url, datetime(2026, 1, 1, tzinfo=UTC))
    run_sql(
        history.url,
        f"""
UPDATE manifests SET owner = 'someone-else' WHERE name = 'b200-pool';
UPDATE manifests SET last_evaluated_at = {earlier} WHERE name = 'rtx4090-workstation';
UPDATE manifests SET updated_at = {earlier}, created_at = {earlier} WHERE name = 'b200-pool-cuda12';
DELETE FROM manifests WHERE name = 'v41-flash-h100-trial';
""",
    )
    code, out = verify(capsys)
    assert (code, out) == (
        1,
        "audit log broken: the tracked-manifest table disagrees with the log at "
        "DeploymentManifest/v41-flash-h100-trial: it has no row, but its latest decision "
        f"{leaves(history.url, name='v41-flash-h100-trial')[-1]['id']} tracks it",
    )
    assert main(["audit", "rebuild-tracking"]) == 0
    tracked = scalar(history.url, "SELECT count(*) FROM manifests")
    assert capsys.readouterr().out.strip() == (
        f"rebuilt the tracked-manifest table from the log ({tracked} tracked manifests, from "
        f"{history.checkpoints[1]} entries): restored 3: HardwareManifest/b200-pool (owner), "
        "HardwareManifest/b200-pool-cuda12 (created_at, updated_at), "
        "HardwareManifest/rtx4090-workstation (last_evaluated_at); added 1: "
        "DeploymentManifest/v41-flash-h100-trial"
    )
    assert verify(capsys)[0] == 0
    assert main(["audit", "rebuild-tracking"]) == 0
    assert capsys.readouterr().out.strip() == (
        f"the tracked-manifest table already agrees with the log: {tracked} tracked manifests, "
        f"from {history.checkpoints[1]} entries"
    )


def test_tracked_history_edits_are_named_and_rebuilt(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    """The spans the fleet at a date reads are the writer's fold of the log: a span that
    ends elsewhere, and one no decision opened, are named, and rebuild-tracking writes them
    again."""
    first = leaves(history.url, name="b200-pool")[0]
    earlier = time_literal(history.url, datetime(2001, 1, 1, tzinfo=UTC))
    run_sql(
        history.url,
        f"UPDATE tracked_spans SET valid_to = {earlier} WHERE leaf_index = {first['leaf_index']};",
    )
    code, out = verify(capsys)
    assert code == 1
    assert out.startswith(
        "audit log broken: the tracked-manifest history disagrees with the log at "
        f"HardwareManifest/b200-pool, the span its decision at leaf {first['leaf_index']} "
        "opened: its valid_to is 2001-01-01T00:00:00Z, the log says "
    )
    run_sql(
        history.url,
        "INSERT INTO tracked_spans SELECT leaf_index + 1000000, kind, 'ghost', decision_id,"
        f" valid_from, valid_from, tracked_since, submitted_at FROM tracked_spans"
        f" WHERE leaf_index = {first['leaf_index']};",
    )
    assert main(["audit", "rebuild-tracking"]) == 0
    assert capsys.readouterr().out.strip().endswith("rewrote 2 spans of its history")
    assert verify(capsys)[0] == 0


def test_tracked_content_is_the_latest_decisions_input(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    """The waived deployment's latest decision came from a sweep: its content is still
    the submission's, and a changed content is named."""
    sqlite = history.url.startswith("sqlite")
    edit = (
        "json_set(content, '$.metadata.owner', 'x')"
        if sqlite
        else "jsonb_set(content, '{metadata,owner}', '\"x\"')"
    )
    run_sql(history.url, f"UPDATE manifests SET content = {edit} WHERE name = {quoted(WAIVED[1])};")
    latest = leaves(history.url, name=WAIVED[1])[-1]
    assert latest["cause"] == "waiver"
    code, out = verify(capsys)
    assert (code, out) == (
        1,
        "audit log broken: the tracked-manifest table disagrees with the log at "
        f"{WAIVED[0]}/{WAIVED[1]}: its content is not the content of decision {latest['id']}",
    )


def test_rebuild_refuses_an_edited_input(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    latest = leaves(history.url, name="v41-flash-h100-vllm")[-1]
    run_sql(
        history.url,
        "UPDATE decisions SET policy_input = replace(policy_input, '\"spec\":{', "
        f'\'"spec":{{"forged":true,\') WHERE seq = {latest["seq"]};',
    )
    assert main(["audit", "rebuild-tracking"]) == 2
    assert capsys.readouterr().err.strip() == (
        "supportgate: error: cannot rebuild the tracked-manifest table from the log: leaf "
        f"{latest['leaf_index']}: the stored policy input of decision {latest['id']} is not the "
        "one its entry names; `supportgate audit verify` names what was edited"
    )


def test_an_empty_log_and_its_checkpoint(migrated_db_url: str) -> None:
    signer = NoteSigner.generate(ORIGIN)
    note = sign_checkpoint(Checkpoint(ORIGIN, 0, EMPTY_ROOT), signer)
    engine = create_db_engine(migrated_db_url)
    try:
        report = verify_log(
            session_factory(engine), notes=[Note("n", note)], verifier=signer.verifier()
        )
    finally:
        engine.dispose()
    assert report.summary() == (
        f"audit log intact: 0 entries, root {base64.b64encode(EMPTY_ROOT).decode()}; 1 "
        f"checkpoint agrees (signed by {ORIGIN}+{signer.key_hash:08x}), the largest of size 0"
    )


def test_notes_are_read_in_size_order(history: History) -> None:
    """A witness file may list its notes in any order (concatenated from two copies)."""
    notes = witness_notes(history.witness)
    report = verify_log_of(history, notes=[*reversed(notes), Note("again", notes[0].text)])
    assert report.intact, report.summary()
    assert report.checkpoints == 3
