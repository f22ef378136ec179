"""Go's verifiers against a running `supportgate serve` (issue 11, part 5).

Every example manifest is posted; the test fetches the latest signed checkpoint and the
verifier key, then every entry of the log with its inclusion proof in that checkpoint, over
HTTP only. It publishes a new matrix version, which sweeps every tracked manifest, waits for
the sweep's checkpoint, fetches the entries it added, every inclusion proof in it and the
consistency proof between the two checkpoints, and hands all of it to tests/tlog_verifier
(golang.org/x/mod/sumdb/note, github.com/transparency-dev/merkle), which must accept it: the
signatures, the inclusion of every example decision (of every entry, in fact) and the
consistency across the sweep. The same fixture with one example decision's entry edited must
be refused, naming that leaf.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.sweep_data import sm90_matrix_json

from ..examples import expected
from ..server import Served, clean_env, make_keys, serving
from ..tlog.go_verifier import run_verifier
from ..waiting import wait_until

pytestmark = pytest.mark.go

NEW_MATRIX = "2026.12.1"


def read_checkpoint(procurement: httpx.Client) -> tuple[str, int]:
    """The latest signed checkpoint and its tree size (the second line of its body)."""
    response = procurement.get("/v1/audit/checkpoint")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    return response.text, int(response.text.split("\n")[1])


def signed_beyond(procurement: httpx.Client, leaf_index: int) -> tuple[str, int] | None:
    note, size = read_checkpoint(procurement)
    return (note, size) if size > leaf_index else None


def decisions(procurement: httpx.Client, **params: str) -> list[dict[str, Any]]:
    response = procurement.get("/v1/audit", params={"limit": "500", **params})
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def entries(procurement: httpx.Client, first: int, end: int) -> list[str]:
    found = []
    for leaf in range(first, end):
        response = procurement.get(f"/v1/audit/entries/{leaf}")
        assert response.status_code == 200, response.text
        assert response.json()["leaf_index"] == leaf
        found.append(response.json()["entry"])
    return found


def inclusion_proofs(procurement: httpx.Client, size: int) -> list[dict[str, Any]]:
    proofs = []
    for leaf in range(size):
        response = procurement.get(
            "/v1/audit/proof/inclusion", params={"leaf_index": leaf, "tree_size": size}
        )
        assert response.status_code == 200, response.text
        proof = response.json()
        proofs.append({key: proof[key] for key in ("leaf_index", "tree_size", "hashes")})
    return proofs


def post_examples(server: Served, ci_key: str) -> None:
    with client(server, ci_key) as ci:
        for path in expected().files:
            posted = ci.post(
                "/v1/evaluations",
                content=path.read_bytes(),
                headers={"Content-Type": "application/yaml"},
            )
            assert posted.status_code == 201, posted.text


def client(server: Served, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=30, headers={"Authorization": f"Bearer {key}"})


def test_go_verifies_a_running_servers_checkpoints_and_proofs(
    go_verifier: Path, tmp_path: Path
) -> None:
    database = f"sqlite:///{tmp_path / 'supportgate.db'}"
    keys = make_keys(database)
    env = clean_env(SUPPORTGATE_DATABASE_URL=database, SUPPORTGATE_CHECKPOINT_INTERVAL="0.2")
    with serving(tmp_path, env=env) as server, client(server, keys["procurement"]) as procurement:
        post_examples(server, keys["ci"])
        examples = decisions(procurement)
        assert len(examples) == len(expected().files)
        newest = max(item["leaf_index"] for item in examples)
        first_note, first_size = wait_until(
            lambda: signed_beyond(procurement, newest), "a checkpoint of every example"
        )
        verifier_key = procurement.get("/v1/audit/verifier-key").text.strip()
        log = entries(procurement, 0, first_size)
        inclusion = inclusion_proofs(procurement, first_size)

        with client(server, keys["admin"]) as admin:
            published = admin.post(
                "/v1/matrix",
                content=sm90_matrix_json(NEW_MATRIX),
                headers={"Content-Type": "application/json"},
            )
        assert published.status_code == 201, published.text

        def swept() -> tuple[str, int] | None:
            judged = decisions(procurement, matrix_version=NEW_MATRIX)
            if len(judged) < len(examples):
                return None
            return signed_beyond(procurement, max(item["leaf_index"] for item in judged))

        second_note, second_size = wait_until(swept, "the sweep and its checkpoint")
        log += entries(procurement, first_size, second_size)
        inclusion += inclusion_proofs(procurement, second_size)
        consistency = procurement.get(
            "/v1/audit/proof/consistency", params={"first": first_size, "second": second_size}
        )
        assert consistency.status_code == 200, consistency.text

    for item in examples:  # every example decision is the entry at its leaf
        assert json.loads(log[item["leaf_index"]])["decision"]["id"] == item["id"]
    fixture: dict[str, Any] = {
        "verifier_key": verifier_key,
        "entries": log,
        "checkpoints": [first_note, second_note],
        "inclusion": inclusion,
        "consistency": [consistency.json()],
    }
    result = run_verifier(go_verifier, fixture, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        f"verified 2 checkpoints, {first_size + second_size} inclusion proofs, 1 consistency proofs"
    )

    tampered = copy.deepcopy(fixture)  # one example decision's verdict turned around
    leaf = examples[len(examples) // 2]["leaf_index"]
    document = json.loads(log[leaf])
    document["decision"]["allowed"] = not document["decision"]["allowed"]
    tampered["entries"][leaf] = json.dumps(document, sort_keys=True, separators=(",", ":"))
    refused = run_verifier(go_verifier, tampered, tmp_path)
    assert refused.returncode == 1
    assert f"inclusion of leaf {leaf} in the tree of {first_size}" in refused.stderr
