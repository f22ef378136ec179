"""The verifiable log over HTTP (CONTRACT section 6), on SQLite and PostgreSQL: the latest
signed checkpoint, the verifier key, entries and proofs, each checked here with the ledger's
verifiers (the Go ones: tests/ledger/test_go_verifier_served.py); out-of-range values are a
400 naming the field; every decision read back carries its leaf_index; a sweep's end signs."""

from __future__ import annotations

import base64
import csv
import io
from pathlib import Path
from typing import Any

import msgspec

from bench.sweep_data import sm90_matrix_json
from supportgate.tlog import (
    Checkpoint,
    NoteVerifier,
    leaf_hash,
    open_checkpoint,
    verify_consistency,
    verify_inclusion,
)

from ..api import Api
from ..api_support import post_examples
from ..waiting import wait_until


def get(api: Api, path: str, role: str = "procurement", **params: Any) -> Any:
    response = api.client.get(path, params=params, headers=api.headers(role))
    assert response.status_code == 200, response.text
    return response


def checkpoint(api: Api) -> Checkpoint:
    response = get(api, "/v1/audit/checkpoint")
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    return open_checkpoint(response.text, verifier(api))


def verifier(api: Api) -> NoteVerifier:
    response = get(api, "/v1/audit/verifier-key")
    assert response.headers["content-type"].startswith("text/plain")
    return NoteVerifier.from_key(response.text)


def b64(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def head_size(api: Api) -> int:
    with api.runtime.db.connect() as connection:
        return int(connection.exec_driver_sql("SELECT size FROM ledger_head").scalar_one())


def test_every_example_decision_is_proven_in_the_signed_checkpoint(api: Api) -> None:
    examples = len(post_examples(api))
    api.runtime.checkpointer.sign_now()
    signed = checkpoint(api)
    assert signed.tree_size == head_size(api)
    assert verifier(api).encoded() == api.runtime.checkpointer.verifier().encoded()
    items = get(api, "/v1/audit", limit=500).json()["items"]
    assert len(items) == examples
    for item in items:
        entry = get(api, f"/v1/audit/entries/{item['leaf_index']}").json()
        assert (entry["leaf_index"], entry["type"]) == (item["leaf_index"], "decision")
        assert msgspec.json.decode(entry["entry"])["decision"]["id"] == item["id"]
        proof = get(
            api,
            "/v1/audit/proof/inclusion",
            leaf_index=item["leaf_index"],
            tree_size=signed.tree_size,
        ).json()
        assert set(proof) == {"leaf_index", "tree_size", "leaf_hash", "hashes"}
        leaf = leaf_hash(entry["entry"].encode())
        assert b64(proof["leaf_hash"]) == leaf
        hashes = [b64(digest) for digest in proof["hashes"]]
        verify_inclusion(leaf, item["leaf_index"], signed.tree_size, hashes, signed.root_hash)


def test_a_later_checkpoint_is_consistent_with_an_earlier_one(api: Api) -> None:
    first = checkpoint(api)  # signed at start: the default matrix
    size = 1 + len(post_examples(api))  # the default matrix's entry, then one per example
    api.runtime.checkpointer.sign_now()
    second = checkpoint(api)
    assert (first.tree_size, second.tree_size) == (1, size)
    proof = get(
        api, "/v1/audit/proof/consistency", first=first.tree_size, second=second.tree_size
    ).json()
    assert (proof["first"], proof["second"]) == (1, size)
    hashes = [b64(digest) for digest in proof["hashes"]]
    verify_consistency(1, size, hashes, first.root_hash, second.root_hash)
    assert get(api, "/v1/audit/proof/consistency", first=size, second=size).json()["hashes"] == []


def test_the_entry_is_the_exact_text_of_the_leaf(api: Api) -> None:
    entry = get(api, "/v1/audit/entries/0").json()
    assert entry["type"] == "matrix"
    with api.runtime.db.connect() as connection:
        stored = connection.exec_driver_sql(
            "SELECT entry FROM ledger_entries WHERE leaf_index = 0"
        ).scalar_one()
    assert entry["entry"] == stored
    proof = get(api, "/v1/audit/proof/inclusion", leaf_index=0, tree_size=1).json()
    assert b64(proof["leaf_hash"]) == leaf_hash(stored.encode())
    assert proof["hashes"] == []


OUT_OF_RANGE: list[tuple[str, dict[str, Any], str]] = [  # (path, query, the field it names)
    ("/v1/audit/entries/1", {}, "leaf_index"),
    ("/v1/audit/entries/99999999999999999999", {}, "leaf_index"),
    ("/v1/audit/proof/inclusion", {"leaf_index": 1, "tree_size": 1}, "leaf_index"),
    ("/v1/audit/proof/inclusion", {"leaf_index": 0, "tree_size": 2}, "tree_size"),
    ("/v1/audit/proof/inclusion", {"leaf_index": 0, "tree_size": 0}, "leaf_index"),
    ("/v1/audit/proof/consistency", {"first": 2, "second": 1}, "first"),
    ("/v1/audit/proof/consistency", {"first": 0, "second": 2}, "second"),
]
MALFORMED: list[tuple[str, dict[str, Any], str]] = [  # (path, query, what Litestar names)
    ("/v1/audit/entries/-1", {}, "leaf_index"),
    ("/v1/audit/proof/inclusion", {"leaf_index": -1, "tree_size": 1}, "leaf_index"),
    ("/v1/audit/proof/inclusion", {"leaf_index": 0}, "tree_size"),
    ("/v1/audit/proof/consistency", {"first": "one", "second": 1}, "first"),
]
LOG_PATHS = [
    "/v1/audit/checkpoint",
    "/v1/audit/verifier-key",
    "/v1/audit/entries/0",
    "/v1/audit/proof/inclusion?leaf_index=0&tree_size=1",
    "/v1/audit/proof/consistency?first=0&second=1",
]


def test_what_the_log_does_not_have_is_a_400_naming_the_field(api: Api) -> None:
    """The log holds one entry (the default matrix)."""
    for path, params, field in OUT_OF_RANGE:
        response = api.client.get(path, params=params, headers=api.headers("procurement"))
        assert response.status_code == 400, (path, params, response.text)
        assert response.json()["field"] == field, (path, params)
    for path, params, key in MALFORMED:
        response = api.client.get(path, params=params, headers=api.headers("procurement"))
        assert response.status_code == 400, (path, params, response.text)
        answer = response.json()
        named = [extra["key"] for extra in answer.get("extra", [])] or [answer["detail"]]
        assert len(named) == 1, (path, params)
        assert key in named[0], (path, params)  # Litestar names a missing one in `detail`


def test_the_log_is_for_procurement(api: Api) -> None:
    for path in LOG_PATHS:
        assert api.client.get(path, headers=api.headers("ci")).status_code == 403, path
        assert api.client.get(path).status_code == 401, path
        assert api.client.get(path, headers=api.headers("admin")).status_code == 200, path


def test_every_decision_read_back_carries_its_leaf_index(api: Api) -> None:
    examples = len(post_examples(api))
    with api.runtime.db.connect() as connection:
        rows = connection.exec_driver_sql("SELECT id, leaf_index FROM decisions").all()
    leaves = {str(id_): int(leaf) for id_, leaf in rows}
    assert sorted(leaves.values()) == list(range(1, examples + 1))
    for item in get(api, "/v1/audit", limit=500).json()["items"]:
        assert item["leaf_index"] == leaves[item["id"]]
    kind, name = "HardwareManifest", "h100-pool-a"
    tracked = get(api, f"/v1/manifests/{kind}/{name}").json()
    latest = tracked["latest_decision"]
    assert latest["leaf_index"] == leaves[latest["id"]]
    history = get(api, f"/v1/manifests/{kind}/{name}/history").json()["items"]
    assert [item["leaf_index"] for item in history] == [leaves[item["id"]] for item in history]
    for item in get(api, "/v1/manifests", limit=500).json()["items"]:
        assert item["latest_decision"]["leaf_index"] == leaves[item["latest_decision"]["id"]]
    text = get(api, "/v1/audit", format="csv").text
    csv_rows = list(csv.DictReader(io.StringIO(text)))
    assert {row["id"]: int(row["leaf_index"]) for row in csv_rows} == leaves


def test_the_201_body_and_its_idempotent_replay_carry_the_leaf_index(
    api: Api, examples_dir: Path
) -> None:
    path = examples_dir / "hw-h100-pool-a.yaml"
    first = api.post_manifest(path, **{"Idempotency-Key": "leaf-1"})
    again = api.post_manifest(path, **{"Idempotency-Key": "leaf-1"})
    other = api.post_manifest(path)
    assert (first.status_code, again.status_code, other.status_code) == (201, 201, 201)
    assert again.content == first.content
    with api.runtime.db.connect() as connection:
        rows = connection.exec_driver_sql("SELECT id, leaf_index FROM decisions").all()
    leaves = {str(id_): int(leaf) for id_, leaf in rows}
    assert first.json()["leaf_index"] == leaves[first.json()["id"]] == 1
    assert other.json()["leaf_index"] == leaves[other.json()["id"]] == 2


def test_a_sweep_signs_a_checkpoint_when_it_ends(quiet_api: Api) -> None:
    post_examples(quiet_api)
    assert quiet_api.runtime.reevaluation.wait_idle()
    before = checkpoint(quiet_api)
    published = quiet_api.client.post(
        "/v1/matrix",
        content=sm90_matrix_json("2026.12.1"),
        headers=quiet_api.headers("admin", **{"Content-Type": "application/json"}),
    )
    assert published.status_code == 201, published.text
    assert quiet_api.runtime.reevaluation.wait_idle()
    with quiet_api.runtime.db.connect() as connection:
        status = connection.exec_driver_sql(
            "SELECT status FROM sweeps WHERE cause = 'matrix'"
        ).scalar_one()
    assert status == "finished"
    size = head_size(quiet_api)
    assert size > before.tree_size + 1  # the matrix and the decisions of its sweep
    # The timer never fires and nothing stopped: only the sweep's end can have signed it.
    wait_until(lambda: checkpoint(quiet_api).tree_size == size, "the sweep's checkpoint")
