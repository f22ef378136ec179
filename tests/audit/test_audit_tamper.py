"""Tampering with a signed history behind the service's back (issue 11), one test per class,
on SQLite (edited with `sqlite3`) and PostgreSQL (edited with `psql`).

The history (tests/audit_history.py) has checkpoint A after the hardware examples and
checkpoint B at the head, both stored and in the witness file. With the witness file every
class is exit 1 naming the first bad leaf, or the checkpoint the database no longer agrees
with. The edits that recompute every hash (tests/tamper.py: nodes, head, rows, the
tracked-manifest table) are caught only through a checkpoint: without one, the same
database passes every other check (asserted). Without the witness, deleting the stored
checkpoints leaves old leaves unsigned, which is caught too; what only the witness catches
is listed at the end, as limits, not as catches.
"""

# ruff: noqa: S608 - the attacker's SQL is text on purpose: what sqlite3 and psql are fed

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from supportgate.audit.checkpoints import witness_notes
from supportgate.audit.verify import UNSIGNED_GRACE, LogReport, verify_log
from supportgate.cli import main
from supportgate.db import LedgerEntry, create_db_engine, session_factory
from supportgate.tlog import NoteSigner, NoteVerifier

from ..audit_history import UNTRACKED, History, sign_head
from ..clock import FakeClock
from ..tamper import (
    insert_forged_decision,
    leaves,
    quoted,
    recompute_everything,
    run_sql,
    scalar,
    shift_leaves,
    time_literal,
)

Attack = Callable[[History], object]
_entries = LedgerEntry.__table__  # type: ignore[attr-defined]


def verify_with_witness(history: History, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(
        [
            "audit",
            "verify",
            "--checkpoints",
            str(history.witness),
            "--verifier-key",
            history.verifier_key,
        ]
    )
    return code, capsys.readouterr().out.strip()


def verify_stored(history: History, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["audit", "verify"])
    return code, capsys.readouterr().out.strip()


def report(history: History, *, witness: bool, now: datetime) -> LogReport:
    """verify_log at `now`, with the witness file's checkpoints or the stored ones."""
    engine = create_db_engine(history.url)
    try:
        return verify_log(
            session_factory(engine),
            notes=witness_notes(history.witness) if witness else None,
            verifier=NoteVerifier.from_key(history.verifier_key),
            clock=FakeClock(now),
        )
    finally:
        engine.dispose()


def without_checkpoints(history: History) -> LogReport:
    """Every check but the checkpoints': none, and a grace so long that no leaf counts as
    unsigned."""
    engine = create_db_engine(history.url)
    try:
        return verify_log(session_factory(engine), notes=[], grace=timedelta(days=3650))
    finally:
        engine.dispose()


def last_recorded_at(history: History) -> datetime:
    return recorded_at_of(history, None)


def recorded_at_of(history: History, leaf: int | None) -> datetime:
    """When leaf `leaf` was recorded (None: the latest leaf; now, when there is none)."""
    column = _entries.c.recorded_at
    statement = (
        select(func.max(column))
        if leaf is None
        else select(column).where(_entries.c.leaf_index == leaf)
    )
    engine = create_db_engine(history.url)
    try:
        with engine.connect() as connection:
            found: datetime | None = connection.execute(statement).scalar_one()
        return found or datetime.now(UTC)
    finally:
        engine.dispose()


def deployment(history: History, name: str) -> dict[str, Any]:
    found = leaves(history.url, kind="DeploymentManifest", name=name)
    assert len(found) == 1, found
    return found[0]


def test_the_untouched_history_is_intact(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    size = history.checkpoints[1]
    key = "+".join(history.verifier_key.split("+")[:2])  # the name and the key hash
    code, out = verify_with_witness(history, capsys)
    assert code == 0, out
    assert out.startswith(f"audit log intact: {size} entries, root ")
    assert out.endswith(f"2 checkpoints agree (signed by {key}), the largest of size {size}")
    assert verify_stored(history, capsys)[0] == 0


# -- edits that leave a hash or a row disagreeing: the leaf is named ------------------------------


def test_an_edited_entry(history: History, capsys: pytest.CaptureFixture[str]) -> None:
    leaf = deployment(history, "v41-flash-b200-typo")["leaf_index"]
    run_sql(
        history.url,
        'UPDATE ledger_entries SET entry = replace(entry, \'"verdict":"rejected"\', '
        f'\'"verdict":"supported"\') WHERE leaf_index = {leaf};',
    )
    code, out = verify_with_witness(history, capsys)
    assert code == 1
    assert out == (
        f"audit log broken at leaf {leaf}: its stored leaf hash is not the hash of its entry "
        "(the entry was edited after it was appended)"
    )


def test_an_edited_stored_input(history: History, capsys: pytest.CaptureFixture[str]) -> None:
    found = deployment(history, "v41-flash-h100-trial")
    run_sql(
        history.url,
        "UPDATE decisions SET policy_input = replace(policy_input, '\"spec\":{', "
        f'\'"spec":{{"forged":true,\') WHERE leaf_index = {found["leaf_index"]};',
    )
    code, out = verify_with_witness(history, capsys)
    assert code == 1
    assert out == (
        f"audit log broken at leaf {found['leaf_index']}: decision {found['id']}: its stored "
        "policy input does not match its input_digest"
    )


@pytest.mark.parametrize("table", ["ledger_entries", "decisions"])
def test_an_edited_recorded_at(
    history: History, table: str, capsys: pytest.CaptureFixture[str]
) -> None:
    found = deployment(history, "v41-pro-b200-trial")
    earlier = time_literal(history.url, datetime(2026, 1, 1, tzinfo=UTC))
    run_sql(
        history.url,
        f"UPDATE {table} SET recorded_at = {earlier} WHERE leaf_index = {found['leaf_index']};",
    )
    code, out = verify_with_witness(history, capsys)
    assert code == 1
    assert out.startswith(f"audit log broken at leaf {found['leaf_index']}: ")
    assert "recorded_at" in out


def test_a_deleted_middle_entry(history: History, capsys: pytest.CaptureFixture[str]) -> None:
    leaf = deployment(history, "v41-flash-h100-pool-b")["leaf_index"]
    run_sql(history.url, f"DELETE FROM ledger_entries WHERE leaf_index = {leaf};")
    code, out = verify_with_witness(history, capsys)
    assert (code, out) == (
        1,
        f"audit log broken at leaf {leaf}: it is missing (the next stored entry is leaf "
        f"{leaf + 1})",
    )


def test_an_edited_waiver(history: History, capsys: pytest.CaptureFixture[str]) -> None:
    leaf = scalar(history.url, "SELECT min(leaf_index) FROM waivers")
    later = time_literal(history.url, datetime(2036, 1, 1, tzinfo=UTC))
    run_sql(history.url, f"UPDATE waivers SET expires_at = {later} WHERE leaf_index = {leaf};")
    code, out = verify_with_witness(history, capsys)
    assert code == 1
    assert out.startswith(f"audit log broken at leaf {leaf}: waiver ")
    assert out.endswith(
        "its row differs from its entry in waiver.expires_at (edited after it was recorded)"
    )


@pytest.mark.parametrize("column", ["document", "digest"])
def test_an_edited_matrix_version(
    history: History, column: str, capsys: pytest.CaptureFixture[str]
) -> None:
    sqlite = history.url.startswith("sqlite")
    edit = {
        "document": (
            "json_set(document, '$.evidence_max_age_days', 3650)"
            if sqlite
            else "jsonb_set(document, '{evidence_max_age_days}', '3650')"
        ),
        "digest": "'0123456789abcdef'",
    }[column]
    run_sql(history.url, f"UPDATE matrix_versions SET {column} = {edit};")
    code, out = verify_with_witness(history, capsys)
    assert code == 1
    assert out.startswith("audit log broken at leaf 0: matrix version ")
    wrong = {
        "document": "its row differs from its entry in document.evidence_max_age_days",
        "digest": "its digest '0123456789abcdef' is not the digest of its document",
    }[column]
    assert wrong in out


def test_an_edited_tracked_manifest(history: History, capsys: pytest.CaptureFixture[str]) -> None:
    run_sql(
        history.url,
        "UPDATE manifests SET latest_verdict = 'supported' "
        "WHERE kind = 'DeploymentManifest' AND name = 'v41-flash-b200-typo';",
    )
    code, out = verify_with_witness(history, capsys)
    assert (code, out) == (
        1,
        "audit log broken: the tracked-manifest table disagrees with the log at "
        "DeploymentManifest/v41-flash-b200-typo: its latest_verdict is 'supported', the log "
        "says 'rejected'",
    )
    assert main(["audit", "rebuild-tracking"]) == 0
    assert (
        capsys.readouterr()
        .out.strip()
        .endswith("restored 1: DeploymentManifest/v41-flash-b200-typo (latest_verdict)")
    )
    assert verify_with_witness(history, capsys)[0] == 0


# -- edits with every hash recomputed: only a checkpoint disagrees --------------------------------


def edit_and_recompute(history: History) -> None:
    """A rejected deployment made supported in its entry, its row and the tracked table."""
    found = deployment(history, "v41-flash-b200-typo")
    run_sql(
        history.url,
        f"""
UPDATE ledger_entries
    SET entry = replace(entry, '"verdict":"rejected"', '"verdict":"supported"')
    WHERE leaf_index = {found["leaf_index"]};
UPDATE decisions SET verdict = 'supported' WHERE leaf_index = {found["leaf_index"]};
UPDATE manifests SET latest_verdict = 'supported'
    WHERE latest_decision_id = {quoted(str(found["id"]))};
""",
    )
    recompute_everything(history.url)


def truncate_and_rewind(history: History, keep: int) -> None:
    """Delete the entries from leaf `keep` on, every row they made, and rewind the head."""
    run_sql(
        history.url,
        f"""
UPDATE manifests SET latest_decision_id = NULL;
DELETE FROM alerts WHERE decision_id IN (SELECT id FROM decisions WHERE leaf_index >= {keep});
DELETE FROM decision_rules
    WHERE decision_seq IN (SELECT seq FROM decisions WHERE leaf_index >= {keep});
DELETE FROM decisions WHERE leaf_index >= {keep};
DELETE FROM waivers WHERE leaf_index >= {keep};
UPDATE waivers SET deleted_at = NULL, deleted_by = NULL, deleted_leaf_index = NULL
    WHERE deleted_leaf_index >= {keep};
DELETE FROM ledger_entries WHERE leaf_index >= {keep};
""",
    )
    recompute_everything(history.url)


def truncate_after_a(history: History) -> None:
    truncate_and_rewind(history, history.checkpoints[0] + 3)


def reorder(history: History) -> None:
    """Two deployments' decisions swap places."""
    first = deployment(history, "v41-flash-b200-bare-api")["leaf_index"]
    second = deployment(history, "v41-flash-ascend950-single")["leaf_index"]
    swaps = "\n".join(
        f"UPDATE {table} SET leaf_index = -1 WHERE leaf_index = {first};\n"
        f"UPDATE {table} SET leaf_index = {first} WHERE leaf_index = {second};\n"
        f"UPDATE {table} SET leaf_index = {second} WHERE leaf_index = -1;"
        for table in ("ledger_entries", "decisions")
    )
    run_sql(history.url, swaps)
    recompute_everything(history.url)


def renumber_after_delete(history: History) -> None:
    """The first decision of the reposted pool (no manifest's latest) deleted, the leaves
    after it moved down."""
    leaf = leaves(history.url, kind="HardwareManifest", name="h100-pool-a")[0]["leaf_index"]
    run_sql(
        history.url,
        f"""
DELETE FROM decision_rules
    WHERE decision_seq = (SELECT seq FROM decisions WHERE leaf_index = {leaf});
DELETE FROM decisions WHERE leaf_index = {leaf};
DELETE FROM ledger_entries WHERE leaf_index = {leaf};
{shift_leaves(leaf + 1, -1)}
""",
    )
    recompute_everything(history.url)


def insert_in_the_middle(history: History) -> None:
    """A forged `supported` decision for a rejected deployment, before the waivers."""
    like = deployment(history, "v41-flash-b200-typo")
    leaf = int(scalar(history.url, "SELECT min(leaf_index) FROM waivers"))
    recorded_at = recorded_at_of(history, leaf) - timedelta(microseconds=1)  # in sequence
    run_sql(
        history.url,
        shift_leaves(leaf, 1)
        + insert_forged_decision(
            history.url,
            leaf,
            int(like["leaf_index"]),
            forged_id=str(uuid.uuid4()),
            recorded_at=recorded_at,
        ),
    )
    recompute_everything(history.url)


def delete_everything(history: History) -> None:
    run_sql(
        history.url,
        """
DELETE FROM ledger_checkpoints;
DELETE FROM alerts;
DELETE FROM decision_rules;
DELETE FROM manifests;
DELETE FROM sweep_memos;
DELETE FROM decisions;
DELETE FROM waivers;
DELETE FROM matrix_versions;
DELETE FROM ledger_entries;
""",
    )
    recompute_everything(history.url)


RECOMPUTED: dict[str, tuple[Attack, str, str]] = {
    # attack, the checkpoint that catches it (a or b), the last that agrees (a or None)
    "edit-entry": (edit_and_recompute, "b", "a"),
    "truncate": (truncate_after_a, "b", "a"),
    "reorder": (reorder, "b", "a"),
    "renumber": (renumber_after_delete, "a", ""),
    "insert-middle": (insert_in_the_middle, "b", "a"),
    "delete-everything": (delete_everything, "a", ""),
}


def checkpoint_named(history: History, which: str) -> str:
    size = history.checkpoints["ab".index(which)]
    return f"the checkpoint of size {size} (root "


@pytest.mark.parametrize("attack", sorted(RECOMPUTED))
def test_recomputed_edits_are_caught_by_the_checkpoint(
    history: History, attack: str, capsys: pytest.CaptureFixture[str]
) -> None:
    edit, caught_by, agrees = RECOMPUTED[attack]
    edit(history)
    code, out = verify_with_witness(history, capsys)
    assert code == 1, out
    assert out.startswith("audit log broken at " + checkpoint_named(history, caught_by)), out
    if agrees:
        assert f"an entry at or after leaf {history.checkpoints[0]} was changed" in out
        assert checkpoint_named(history, agrees) in out.split(": ", 1)[1]
    else:
        assert "an entry at or after leaf 0 was changed" in out
    plain = without_checkpoints(history)
    assert plain.intact, plain.summary()  # nothing but the checkpoint catches it


def test_the_stored_checkpoints_catch_what_they_cover(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attacker left the stored checkpoints (they cannot re-sign without the key)."""
    edit_and_recompute(history)
    code, out = verify_stored(history, capsys)
    assert code == 1
    assert out.startswith(
        f"audit log broken at the checkpoint of size {history.checkpoints[1]} (root "
    )
    assert out.endswith(f"the stored checkpoint of size {history.checkpoints[0]}) still agrees)")


def insert_at_the_end(history: History, recorded_at: datetime) -> int:
    like = deployment(history, "v41-flash-b200-typo")
    leaf = history.checkpoints[1]
    run_sql(
        history.url,
        insert_forged_decision(
            history.url,
            leaf,
            int(like["leaf_index"]),
            forged_id=str(uuid.uuid4()),
            recorded_at=recorded_at,
        ),
    )
    recompute_everything(history.url)
    return leaf


def test_a_forged_entry_at_the_end_is_unsigned(history: History) -> None:
    """Past every checkpoint, dated just after the last entry: once UNSIGNED_GRACE has
    passed, the service would have signed it."""
    recorded_at = last_recorded_at(history) + timedelta(milliseconds=1)
    leaf = insert_at_the_end(history, recorded_at)
    found = report(history, witness=True, now=recorded_at + timedelta(minutes=1))
    assert found.summary().startswith(
        f"audit log broken at leaf {leaf}: no checkpoint covers it, though it was recorded at "
    )
    assert without_checkpoints(history).intact


def test_a_forged_entry_at_the_end_dated_in_the_future(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    leaf = insert_at_the_end(history, datetime.now(UTC) + timedelta(minutes=5))
    code, out = verify_with_witness(history, capsys)
    assert code == 1
    assert out.startswith(f"audit log broken at leaf {leaf}: it was recorded at ")
    assert out.endswith("in the future")


def test_a_forged_entry_at_the_end_dated_now_passes_until_the_grace_ends(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    """The window the unsigned-tail rule leaves (not a catch until it closes): a live
    service's last entries are unsigned for up to 5 s, so an entry forged at the end and
    dated now looks like one of them until UNSIGNED_GRACE has passed."""
    now = datetime.now(UTC)
    leaf = insert_at_the_end(history, now)
    fresh = report(history, witness=True, now=now + timedelta(seconds=1))
    assert fresh.intact, fresh.summary()
    assert fresh.summary().endswith(
        f"the largest of size {leaf}; the last 1 were recorded in the last 10 s and are not "
        "signed yet"
    )
    later = report(history, witness=True, now=now + UNSIGNED_GRACE + timedelta(seconds=1))
    assert later.problem is not None
    assert later.problem.leaf_index == leaf


# -- without the witness file -------------------------------------------------------------------

WITHOUT_WITNESS: dict[str, Attack] = {
    "edit-entry": edit_and_recompute,
    "truncate": truncate_after_a,
    "reorder": reorder,
    "renumber": renumber_after_delete,
    "insert-middle": insert_in_the_middle,
    "insert-end": lambda history: insert_at_the_end(history, datetime.now(UTC)),
}


@pytest.mark.parametrize("attack", sorted(WITHOUT_WITNESS))
def test_deleting_the_stored_checkpoints_leaves_old_leaves_unsigned(
    history: History, attack: str
) -> None:
    """The attacker recomputes everything and deletes the stored checkpoints that no longer
    agree (all of them, or those after the edit): every leaf they covered is then unsigned,
    and older than the service's signing interval once UNSIGNED_GRACE has passed."""
    WITHOUT_WITNESS[attack](history)
    run_sql(history.url, "DELETE FROM ledger_checkpoints;")
    found = report(history, witness=False, now=last_recorded_at(history) + timedelta(minutes=1))
    assert found.problem is not None
    assert found.problem.leaf_index == 0
    assert "no checkpoint covers it" in found.problem.what


def resign_stored(history: History) -> None:
    """The attacker also holds the signing key (by default it lies beside the SQLite file)."""
    run_sql(history.url, "DELETE FROM ledger_checkpoints;")
    engine = create_db_engine(history.url)
    try:
        signer = NoteSigner.from_key(history.key_file.read_text())
        sign_head(session_factory(engine), signer, history.witness.with_name("forged.txt"))
    finally:
        engine.dispose()


def resigned_with_the_key(history: History) -> None:
    """Any recomputed edit, signed again with the key the attacker found beside the database."""
    edit_and_recompute(history)
    resign_stored(history)


def truncated_to_a_checkpoint(history: History) -> None:
    """Cut back to exactly a signed size; the later stored checkpoint deleted."""
    truncate_and_rewind(history, history.checkpoints[0])
    run_sql(
        history.url, f"DELETE FROM ledger_checkpoints WHERE tree_size > {history.checkpoints[0]};"
    )


LIMITS: dict[str, Attack] = {
    "resigned-with-the-key": resigned_with_the_key,
    "truncated-to-a-checkpoint": truncated_to_a_checkpoint,
    "everything-deleted": delete_everything,  # nothing left to compare
}


@pytest.mark.parametrize("attack", sorted(LIMITS))
def test_what_only_the_witness_catches(
    history: History, attack: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """LIMITS, not catches: without the witness file these pass `audit verify`, which is
    why the witness file (or any checkpoint saved outside the database) matters."""
    LIMITS[attack](history)
    stored = report(history, witness=False, now=last_recorded_at(history) + timedelta(minutes=1))
    assert stored.intact, stored.summary()  # the limit: undetected without the witness
    code, out = verify_with_witness(history, capsys)
    assert code == 1, out
    assert out.startswith("audit log broken at the checkpoint of size ")


def test_an_untracked_manifest_put_back(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tracked-manifest table follows `untracked` entries: a row put back is named."""
    run_sql(
        history.url,
        f"""
INSERT INTO manifests (kind, name, owner, content, content_digest, hardware_ref,
                       latest_decision_id, latest_verdict, created_at, updated_at,
                       last_evaluated_at)
    SELECT kind, {quoted(UNTRACKED[1])}, owner, content, content_digest, hardware_ref,
           latest_decision_id, latest_verdict, created_at, updated_at, last_evaluated_at
    FROM manifests WHERE kind = {quoted(UNTRACKED[0])} AND name = 'v41-flash-b200-bare-api';
""",
    )
    code, out = verify_with_witness(history, capsys)
    assert (code, out) == (
        1,
        "audit log broken: the tracked-manifest table disagrees with the log at "
        f"{UNTRACKED[0]}/{UNTRACKED[1]}: it has a row, but the log does not track it",
    )
    assert main(["audit", "rebuild-tracking"]) == 0
    assert capsys.readouterr().out.strip().endswith(f"removed 1: {UNTRACKED[0]}/{UNTRACKED[1]}")
    assert verify_with_witness(history, capsys)[0] == 0
