"""POST /v1/evaluations as CI uses it, on SQLite and PostgreSQL: JSON and YAML bodies, the
decision's shape, tracking (re-posting replaces), and `hardware.ref` resolution."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml
from sqlalchemy import text

from supportgate.auth import Principal

from ..api import Api
from ..api_support import (
    DECISION_FIELDS,
    created,
    deployment,
    example,
    hardware,
    post,
    rows,
    rule_ids,
)
from ..examples import EXAMPLES, expected

VIOLATION_FIELDS = {"rule", "severity", "message", "path"}


def _policy_input(api: Api, decision_id: str) -> str:
    with api.runtime.db.connect() as connection:
        return str(
            connection.execute(
                text("SELECT policy_input FROM decisions WHERE id = :id"), {"id": decision_id}
            ).scalar_one()
        )


def test_the_201_body_is_the_contracts_decision(api: Api) -> None:
    created(api, example("hw-h100-pool-a.yaml"))
    before = datetime.now(UTC)
    response = post(api, example("dep-h100-port-trial.yaml"))
    assert response.status_code == 201, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()

    assert set(body) == DECISION_FIELDS
    assert body["manifest"] == {"kind": "DeploymentManifest", "name": "v41-flash-h100-trial"}
    assert body["verdict"] == "experimental"
    assert body["allowed"] is True
    assert body["cause"] == "submission"
    assert re.fullmatch(r"[0-9a-f-]{36}", body["id"])
    assert body["matrix_version"] == "2026.11.1"
    assert body["policy_revision"] == api.runtime.policies.bundle.revision
    evaluated_at = datetime.fromisoformat(body["evaluated_at"])
    assert evaluated_at.tzinfo is not None
    assert before - timedelta(seconds=1) <= evaluated_at <= datetime.now(UTC)

    assert body["violations"], "the H100 port trial has warnings"
    for violation in body["violations"]:
        assert VIOLATION_FIELDS <= set(violation) <= VIOLATION_FIELDS | {"waiver_id"}
        assert violation["severity"] in {"deny", "warn", "waived"}
        assert violation["path"]
        assert violation["message"]
    assert {"support.platform", "claims.correctness", "claims.performance"} <= rule_ids(body)
    assert {v["severity"] for v in body["violations"]} == {"warn"}

    assert body["claims"] == {"builds": "proven", "correct": "unproven", "performant": "unproven"}
    assert set(body["checklist"]) == {
        "official_support",
        "kernels_and_correctness",
        "distributed_performance",
        "service_completeness",
    }
    assert body["checklist"]["official_support"] is False
    assert isinstance(body["recommendations"], list)
    assert any("vllm" in text for text in body["recommendations"])

    # input_digest is the sha256 of the canonical input the engine was given, which is kept.
    canonical = _policy_input(api, body["id"])
    assert body["input_digest"] == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    assert json.loads(canonical)["manifest"]["metadata"]["name"] == "v41-flash-h100-trial"


def test_a_rejected_decision_is_not_allowed(api: Api) -> None:
    body = created(api, example("hw-rtx4090-workstation.yaml"))
    assert body["verdict"] == "rejected"
    assert body["allowed"] is False
    denies = {v["rule"] for v in body["violations"] if v["severity"] == "deny"}
    assert {"host.compiler", "host.python"} <= denies


@pytest.mark.parametrize(
    "content_type",
    ["application/yaml", "application/x-yaml", "text/yaml", "application/yaml; charset=utf-8"],
)
def test_yaml_and_json_bodies_decide_the_same(api: Api, content_type: str) -> None:
    raw = (EXAMPLES / "hw-h100-pool-a.yaml").read_bytes()
    from_yaml = post(api, raw, content_type=content_type)
    assert from_yaml.status_code == 201, from_yaml.text
    from_json = post(api, yaml.safe_load(raw), content_type="application/json; charset=utf-8")
    assert from_json.status_code == 201, from_json.text

    first, second = from_yaml.json(), from_json.json()
    assert first["id"] != second["id"]
    for field in ("manifest", "verdict", "violations", "claims", "checklist", "recommendations"):
        assert first[field] == second[field], field
    manifests = [json.loads(_policy_input(api, d["id"]))["manifest"] for d in (first, second)]
    assert manifests[0] == manifests[1]
    assert manifests[0]["metadata"]["labels"] == {"site": "fra1"}


def test_a_body_without_content_type_is_read_as_json(api: Api) -> None:
    response = post(api, example("hw-b200-pool.yaml"), content_type=None)
    assert response.status_code == 201, response.text
    assert response.json()["verdict"] == "supported"


def test_every_example_gets_its_expected_decision(api: Api) -> None:
    """Posted as JSON, evaluated now: the rules may have grown since (evidence ages)."""
    wanted = expected().decisions
    problems = {}
    for name, want in wanted.items():
        body = created(api, example(name))
        if found := want.problems(body["verdict"], rule_ids(body)):
            problems[name] = found
    assert problems == {}
    assert rows(api).manifests == len(wanted)


def test_posting_again_replaces_the_tracked_manifest(api: Api) -> None:
    procurement = api.headers("procurement")
    first = created(api, hardware("pool-a", nodes=8))
    changed = hardware("pool-a", nodes=2)
    changed["metadata"]["owner"] = "platform"
    changed["metadata"]["labels"] = {"site": "ams2"}
    replaced = post(api, changed, role="admin")  # only an admin changes the owner (test_owners)
    assert replaced.status_code == 201, replaced.text
    second = replaced.json()

    tracked = api.client.get("/v1/manifests/HardwareManifest/pool-a", headers=procurement).json()
    assert tracked["owner"] == "platform"
    assert tracked["content"]["spec"]["nodes"] == 2
    assert tracked["content"]["metadata"] == {
        "name": "pool-a",
        "owner": "platform",
        "labels": {"site": "ams2"},
    }
    # the 201 body, and the decision's leaf in the log (the 201 has it once the writer sets it)
    assert tracked["latest_decision"] == {
        "leaf_index": tracked["latest_decision"]["leaf_index"],
        **second,
    }
    assert tracked["updated_at"] >= tracked["tracked_since"]

    listing = api.client.get("/v1/manifests", headers=procurement).json()
    assert [(m["kind"], m["name"]) for m in listing["items"]] == [("HardwareManifest", "pool-a")]
    history = api.client.get(
        "/v1/manifests/HardwareManifest/pool-a/history", headers=procurement
    ).json()
    assert [d["id"] for d in history["items"]] == [second["id"], first["id"]]
    assert rows(api).decisions == 2


def test_the_same_name_in_two_kinds_is_two_manifests(api: Api) -> None:
    created(api, hardware("shared-name"))
    created(api, deployment("shared-name", ref="shared-name"))
    listing = api.client.get("/v1/manifests", headers=api.headers("procurement")).json()
    assert sorted((m["kind"], m["name"]) for m in listing["items"]) == [
        ("DeploymentManifest", "shared-name"),
        ("HardwareManifest", "shared-name"),
    ]


def test_hardware_ref_resolves_to_the_tracked_hardware_now(api: Api) -> None:
    # No such hardware yet: a deny, never a guess.
    unresolved = created(api, deployment("trial", ref="pool-a"))
    assert unresolved["verdict"] == "rejected"
    denied = [v for v in unresolved["violations"] if v["rule"] == "manifest.hardware-ref"]
    assert len(denied) == 1
    assert denied[0]["severity"] == "deny"
    assert denied[0]["path"].startswith("spec.hardware")

    # Tracked: the deployment is judged on that pool (unlisted H100: experimental).
    created(api, hardware("pool-a"))
    resolved = created(api, deployment("trial", ref="pool-a"))
    assert resolved["verdict"] == "experimental"
    assert "manifest.hardware-ref" not in rule_ids(resolved)
    assert "topology.capacity" not in rule_ids(resolved)

    # The pool shrinks to 4 GPUs: the same deployment (8 GPUs) no longer fits.
    created(api, hardware("pool-a", nodes=1, accelerator={**_h100(), "per_node": 4}))
    shrunk = created(api, deployment("trial", ref="pool-a"))
    assert shrunk["verdict"] == "rejected"
    assert "topology.capacity" in rule_ids(shrunk)

    # The policy saw the tracked hardware's content, as it was at that time.
    seen = json.loads(_policy_input(api, shrunk["id"]))
    assert seen["hardware"]["nodes"] == 1
    assert seen["hardware"]["accelerator"]["per_node"] == 4

    # Untracked again: the reference no longer resolves.
    deleted = api.client.delete(
        "/v1/manifests/HardwareManifest/pool-a", headers=api.headers("admin")
    )
    assert deleted.status_code == 204
    again = created(api, deployment("trial", ref="pool-a"))
    assert "manifest.hardware-ref" in rule_ids(again)


def test_a_deployment_may_carry_its_hardware_inline(api: Api) -> None:
    inline = deployment("inline", ref="unused")
    inline["spec"]["hardware"] = {"spec": example("hw-b200-pool.yaml")["spec"]}
    inline["spec"].pop("port")
    body = created(api, inline)
    assert "manifest.hardware-ref" not in rule_ids(body)
    assert "support.platform" not in rule_ids(body)
    tracked = api.client.get(
        "/v1/manifests/DeploymentManifest/inline", headers=api.headers("procurement")
    ).json()
    assert tracked["content"]["spec"]["hardware"]["spec"]["accelerator"]["arch"] == "sm100"


def _h100() -> dict[str, Any]:
    accelerator: dict[str, Any] = example("hw-h100-pool-a.yaml")["spec"]["accelerator"]
    return accelerator


def test_health_live_answers_while_an_evaluation_runs(
    sqlite_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A costly organisation rule once stalled /health/live for 1-5 s: a manifest was
    evaluated on the event loop. Here the engine's evaluation holds until the test lets it go;
    /health/live must answer before that (an order of events, not a timing)."""
    inner = sqlite_api.runtime.engine
    evaluate = inner.evaluate
    running, release = threading.Event(), threading.Event()
    order: list[str] = []

    def held(*args: Any) -> Any:
        running.set()
        if not release.wait(timeout=30):  # before the fix: the loop was held here
            order.append("evaluation gave up waiting")
        order.append("evaluation done")
        return evaluate(*args)

    monkeypatch.setattr(inner, "evaluate", held)
    answers: list[Any] = []
    submitting = threading.Thread(target=lambda: answers.append(post(sqlite_api, hardware("slow"))))
    submitting.start()
    try:
        assert running.wait(timeout=30), "the evaluation never started"
        live = sqlite_api.client.get("/health/live")
        order.append(f"live {live.status_code}")
    finally:
        release.set()
        submitting.join(timeout=60)
    assert order == ["live 200", "evaluation done"]
    assert answers[0].status_code == 201, answers[0].text


def test_a_manifest_with_several_problems_gets_all_of_them_in_the_400(api: Api) -> None:
    """CONTRACT 10.8: `errors` lists every problem, with line and column for YAML, and
    `field` is the first one's."""
    text = (EXAMPLES / "hw-h100-pool-a.yaml").read_text()
    broken = text.replace("nodes: 8", "nodes: -1").replace("per_node: 8", "per_node: 0")
    broken += "colour: blue\n"
    assert broken.count("\n") > text.count("\n")
    before = rows(api)
    response = post(api, broken.encode(), content_type="application/yaml")
    assert response.status_code == 400, response.text
    body = response.json()
    errors = body["errors"]
    assert body["field"] == errors[0]["field"]
    fields = {error["field"] for error in errors}
    assert {"$.spec.nodes", "$.spec.accelerator.per_node", "$.colour"} <= fields
    lines = broken.splitlines()
    for error in errors:
        assert set(error) == {"field", "message", "line", "column"}
        key = error["field"].rsplit(".", 1)[-1]
        assert key in lines[error["line"] - 1][error["column"] - 1 :], error
    assert rows(api) == before


def test_an_evaluation_never_runs_on_the_event_loop(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new manifest's evaluation (0.5-1.2 ms; an organisation's rule may take seconds) and
    a remembered one alike are asked for off the event loop: the engine notes the thread."""
    runtime = api.runtime
    asked_in: list[int] = []
    evaluate = runtime.engine.evaluate

    def noted(*args: Any) -> Any:
        asked_in.append(threading.get_ident())
        return evaluate(*args)

    monkeypatch.setattr(runtime.engine, "evaluate", noted)
    principal = Principal(key_id=1, name="ci", role="ci")
    body = json.dumps(hardware("pool-off-loop")).encode()

    async def submit_twice() -> int:
        for _ in range(2):  # a new manifest, then the same again
            answer = await runtime.evaluations.submit(
                body=body, fmt="json", principal=principal, idempotency_key=None
            )
            assert answer.status == 201
        return threading.get_ident()

    # A loop of its own in a thread of its own: a worker may still hold another test's loop.
    with ThreadPoolExecutor(max_workers=1) as pool:
        loop_thread = pool.submit(asyncio.run, submit_twice()).result()
    assert len(asked_in) == 2
    assert loop_thread not in asked_in
