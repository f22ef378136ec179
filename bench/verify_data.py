"""A large, valid, signed log in a SQLite file, for timing `supportgate audit verify`.

Filled directly with the sqlite3 module (executemany in one transaction, no journal), not
through the API, yet everything `audit verify` checks holds:

- leaf 0 is the default matrix (its `matrix_versions` row, digest as supportgate/matrix
  prepares it); every other leaf a decision made from a real evaluation of one of the
  examples (so a real document, policy input and rules), with its own id, a name among
  NAMES per example, evaluated over the year before now and recorded 2 ms later;
- every WAIVER_EVERY leaves a waiver is created, and deleted on the next leaf;
- the `decisions`, `decision_rules` and `waivers` rows of those entries, and the
  tracked-manifest table as the log leads to (each name's latest decision);
- the tree's nodes as MerkleTree computes them, the head, and one checkpoint at the head,
  signed with a new key (its verifier is returned).
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from bench.common import EXAMPLE_TIME, example_manifests
from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.db.migrate import upgrade
from supportgate.evaluations.evaluator import Evaluation, Evaluator, Subject
from supportgate.ledger.entries import (
    Entry,
    decision_entry,
    matrix_entry,
    waiver_created_entry,
    waiver_deleted_entry,
)
from supportgate.manifests import HardwareManifest, to_builtins
from supportgate.matrix import load_matrix_file, prepare
from supportgate.policy import EmbeddedEngine, PolicyBundle
from supportgate.policy.inputs import canonical_digest
from supportgate.tlog import (
    Checkpoint,
    MerkleTree,
    NodeId,
    NoteSigner,
    NoteVerifier,
    sign_checkpoint,
)

NAMES = 400
"""Names per example: 18 examples, 7,200 tracked manifests."""
WAIVER_EVERY = 100_000
BATCH = 20_000
"""Rows per executemany."""
ORIGIN = "supportgate/bench"
_canonical = msgspec.json.Encoder(order="sorted")


@dataclass(frozen=True, slots=True)
class _Template:
    evaluation: Evaluation
    document: str
    """The decision row's document column: violations, claims, checklist, recommendations."""
    rules: list[tuple[str, str]]
    content: str
    content_digest: str
    owner: str | None
    hardware_ref: str | None


def _time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def _templates() -> list[_Template]:
    bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
    evaluator = Evaluator(
        EmbeddedEngine(bundle), prepare(load_matrix_file(bundle.default_matrix_path))
    )
    hardware, deployments = example_manifests()
    pools = {m.metadata.name: m for m in hardware if isinstance(m, HardwareManifest)}
    at = datetime.fromisoformat(EXAMPLE_TIME)
    found = []
    for manifest in hardware + deployments:
        evaluation = evaluator.evaluate(Subject(manifest), evaluated_at=at, hardware=pools.get)
        decision = evaluation.decision
        content = evaluation.policy_input.document["manifest"]
        spec = content.get("spec", {})
        found.append(
            _Template(
                evaluation=evaluation,
                document=msgspec.json.encode(
                    {
                        "violations": decision.violations,
                        "claims": decision.claims,
                        "checklist": decision.checklist,
                        "recommendations": decision.recommendations,
                    }
                ).decode(),
                rules=sorted({(v.rule, v.severity) for v in decision.violations}),
                content=msgspec.json.encode(content).decode(),
                content_digest=canonical_digest(_canonical.encode(content)),
                owner=content.get("metadata", {}).get("owner"),
                hardware_ref=(
                    spec.get("hardware", {}).get("ref")
                    if content["kind"] == "DeploymentManifest"
                    else None
                ),
            )
        )
    return found


class _NodeRows:
    """A node store that only collects the nodes the tree completes, as rows to insert."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, int, bytes]] = []

    def get(self, ids: Sequence[NodeId]) -> list[bytes]:
        assert not ids
        return []

    def put(self, nodes: Sequence[tuple[NodeId, bytes]]) -> None:
        self.rows.extend((node.level, node.index, digest) for node, digest in nodes)


@dataclass
class _Tracked:
    kind: str
    name: str
    template: _Template
    first_recorded_at: str
    latest_id: str = ""
    latest_verdict: str = ""
    recorded_at: str = ""
    evaluated_at: str = ""


def fill(path: Path, entries: int) -> NoteVerifier:
    """Make the log of `entries` leaves at `path` (a new file); the checkpoint's verifier."""
    upgrade(f"sqlite:///{path}")
    templates = _templates()
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=OFF")
    connection.execute("PRAGMA synchronous=OFF")
    connection.execute("BEGIN")
    nodes = _NodeRows()
    tree = MerkleTree(nodes)
    start = datetime.now(UTC) - timedelta(days=365)
    step = timedelta(days=365) / entries
    tracked: dict[tuple[str, str], _Tracked] = {}
    matrix = load_matrix_file(PolicyBundle.load(DEFAULT_POLICY_DIR).default_matrix_path)
    document = to_builtins(matrix)
    first = matrix_entry(
        version=matrix.version,
        document=document,
        published_by="bench",
        published_at=start,
        provenance=None,
    )
    connection.execute(
        "INSERT INTO matrix_versions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            matrix.version,
            msgspec.json.encode(document).decode(),
            prepare(matrix).key,
            _time(matrix.effective_from) if matrix.effective_from else None,
            _time(start),
            "bench",
            0,
            None,  # provenance: posted, not read from a matrix source
        ),
    )
    _insert_entries(connection, tree, nodes, [first])
    for begin in range(1, entries, BATCH):
        batch = range(begin, min(entries, begin + BATCH))
        made = [_leaf(leaf, start + step * leaf, templates, tracked) for leaf in batch]
        _insert_entries(connection, tree, nodes, [entry for entry, _ in made])
        _insert_rows(connection, [rows for _, rows in made])
    _insert_tracked(connection, tracked.values())
    signer = NoteSigner.generate(ORIGIN)
    note = sign_checkpoint(Checkpoint(ORIGIN, tree.size, tree.root()), signer)
    connection.execute("UPDATE ledger_head SET size = ?, root = ?", (tree.size, tree.root()))
    connection.execute(
        "INSERT INTO ledger_checkpoints VALUES (?, ?, ?)",
        (tree.size, note, _time(datetime.now(UTC))),
    )
    connection.execute("COMMIT")
    connection.close()
    return signer.verifier()


def _leaf(
    leaf: int, at: datetime, templates: list[_Template], tracked: dict[tuple[str, str], _Tracked]
) -> tuple[Entry, dict[str, list[tuple[Any, ...]]]]:
    """Leaf `leaf`'s entry, and its rows by table."""
    if leaf % WAIVER_EVERY == 0:
        return _waiver_created(leaf, at)
    if leaf % WAIVER_EVERY == 1 and leaf > 1:
        return _waiver_deleted(leaf, at)
    template = templates[leaf % len(templates)]
    decision = template.evaluation.decision
    name = f"{decision.manifest.name}-{leaf // len(templates) % NAMES}"
    recorded_at = at + timedelta(milliseconds=2)
    made = msgspec.structs.replace(
        decision,
        id=str(uuid.UUID(int=leaf)),
        manifest=msgspec.structs.replace(decision.manifest, name=name),
        evaluated_at=at,
    )
    entry = decision_entry(made, recorded_at=recorded_at)
    key = (decision.manifest.kind, name)
    state = tracked.setdefault(key, _Tracked(*key, template, _time(recorded_at)))
    state.latest_id, state.latest_verdict = made.id, made.verdict
    state.recorded_at, state.evaluated_at = _time(recorded_at), _time(at)
    row = (
        leaf,  # seq
        made.id,
        key[0],
        name,
        made.verdict,
        int(made.allowed),
        made.cause,
        made.matrix_version,
        made.policy_revision,
        made.input_digest,
        _time(at),
        _time(recorded_at),
        template.document,
        template.evaluation.policy_input.canonical.decode(),
        leaf,
    )
    rules = [(leaf, rule, severity) for rule, severity in template.rules]
    return entry, {"decisions": [row], "decision_rules": rules}


_WAIVER = {
    "rule": "port.production",
    "kind": "DeploymentManifest",
    "name": "v41-flash-h100-prod-0",
    "justification": "bench",
    "created_by": "bench",
}


def _waiver_created(leaf: int, at: datetime) -> tuple[Entry, dict[str, list[tuple[Any, ...]]]]:
    waiver_id, expires = f"waiver-{leaf}", at + timedelta(days=30)
    entry = waiver_created_entry(waiver_id=waiver_id, expires_at=expires, created_at=at, **_WAIVER)
    row = (leaf, waiver_id, *list(_WAIVER.values())[:4], _time(expires), "bench", _time(at), leaf)
    return entry, {"waivers": [row]}


def _waiver_deleted(leaf: int, at: datetime) -> tuple[Entry, dict[str, list[tuple[Any, ...]]]]:
    created = leaf - 1
    entry = waiver_deleted_entry(waiver_id=f"waiver-{created}", deleted_by="bench", deleted_at=at)
    return entry, {"waiver_deletions": [(_time(at), "bench", leaf, created)]}


_INSERTS = {
    "decisions": "INSERT INTO decisions (seq, id, kind, name, verdict, allowed, cause, "
    "matrix_version, policy_revision, input_digest, evaluated_at, recorded_at, document, "
    "policy_input, leaf_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "decision_rules": "INSERT INTO decision_rules VALUES (?, ?, ?)",
    "waivers": "INSERT INTO waivers (seq, id, rule, kind, name, justification, expires_at, "
    "created_by, created_at, leaf_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "waiver_deletions": "UPDATE waivers SET deleted_at = ?, deleted_by = ?, "
    "deleted_leaf_index = ? WHERE leaf_index = ?",
}


def _insert_entries(
    connection: sqlite3.Connection, tree: MerkleTree, nodes: _NodeRows, entries: list[Entry]
) -> None:
    first = tree.size
    tree.append(entry.body for entry in entries)
    connection.executemany(
        "INSERT INTO ledger_entries VALUES (?, ?, ?, ?)",
        [
            (first + n, entry.type, entry.body.decode(), _time(entry.recorded_at))
            for n, entry in enumerate(entries)
        ],
    )
    connection.executemany("INSERT INTO ledger_nodes VALUES (?, ?, ?)", nodes.rows)
    nodes.rows.clear()


def _insert_rows(
    connection: sqlite3.Connection, made: list[dict[str, list[tuple[Any, ...]]]]
) -> None:
    for table, statement in _INSERTS.items():
        rows = [row for rows in made for row in rows.get(table, ())]
        if rows:
            connection.executemany(statement, rows)


def _insert_tracked(connection: sqlite3.Connection, tracked: Iterable[_Tracked]) -> None:
    connection.executemany(
        "INSERT INTO manifests (kind, name, owner, content, content_digest, hardware_ref, "
        "latest_decision_id, latest_verdict, created_at, updated_at, last_evaluated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                t.kind,
                t.name,
                t.template.owner,
                t.template.content,
                t.template.content_digest,
                t.template.hardware_ref,
                t.latest_id,
                t.latest_verdict,
                t.first_recorded_at,
                t.recorded_at,
                t.evaluated_at,
            )
            for t in tracked
        ],
    )
