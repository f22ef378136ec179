"""Idempotency-Key on POST /v1/evaluations, on SQLite and PostgreSQL: a repeat gets the first
response and records nothing; another body under the same key is 409; keys belong to an API
key; concurrent repeats in one process share one decision."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from ..api import Api
from ..api_support import example, hardware, post, rows

KEY = "ci-run-1234-step-7"


def test_a_repeat_gets_the_first_response_and_records_nothing(api: Api) -> None:
    doc = example("hw-h100-pool-a.yaml")
    first = post(api, doc, **{"Idempotency-Key": KEY})
    assert first.status_code == 201, first.text
    after_first = rows(api)
    assert (after_first.decisions, after_first.manifests, after_first.idempotency_keys) == (1, 1, 1)

    for _ in range(3):
        again = post(api, doc, **{"Idempotency-Key": KEY})
        assert again.status_code == 201
        assert again.content == first.content
        assert again.headers["content-type"].startswith("application/json")
    assert rows(api) == after_first

    history = api.client.get(
        "/v1/manifests/HardwareManifest/h100-pool-a/history", headers=api.headers("procurement")
    ).json()
    assert [d["id"] for d in history["items"]] == [first.json()["id"]]


def test_without_a_key_every_post_is_a_new_decision(api: Api) -> None:
    doc = example("hw-h100-pool-a.yaml")
    ids = {post(api, doc).json()["id"] for _ in range(3)}
    assert len(ids) == 3
    assert rows(api).decisions == 3
    assert rows(api).idempotency_keys == 0


def test_the_same_key_with_another_body_is_409(api: Api) -> None:
    assert post(api, hardware("pool-a"), **{"Idempotency-Key": KEY}).status_code == 201
    before = rows(api)
    for other in (hardware("pool-a", nodes=3), hardware("pool-b")):
        conflict = post(api, other, **{"Idempotency-Key": KEY})
        assert conflict.status_code == 409, conflict.text
        body = conflict.json()
        assert body["field"] == "Idempotency-Key"
        assert "verdict" not in body
    assert rows(api) == before


def test_each_api_key_has_its_own_idempotency_keys(api: Api) -> None:
    other_ci = api.runtime.keys.create(name="ci-other", role="ci").key
    mine = post(api, hardware("pool-a"), **{"Idempotency-Key": KEY})
    theirs = api.client.post(
        "/v1/evaluations",
        content=json.dumps(hardware("pool-b")).encode(),
        headers={
            "Authorization": f"Bearer {other_ci}",
            "Content-Type": "application/json",
            "Idempotency-Key": KEY,
        },
    )
    assert mine.status_code == theirs.status_code == 201, theirs.text
    assert mine.json()["manifest"]["name"] == "pool-a"
    assert theirs.json()["manifest"]["name"] == "pool-b"
    assert rows(api).idempotency_keys == 2
    # Each replays its own first response.
    assert post(api, hardware("pool-a"), **{"Idempotency-Key": KEY}).content == mine.content
    assert rows(api).decisions == 2


def test_a_refused_request_does_not_use_up_its_key(api: Api) -> None:
    bad = hardware("pool-a")
    bad["spec"]["nodes"] = "eight"
    refused = post(api, bad, **{"Idempotency-Key": KEY})
    assert refused.status_code == 400
    assert rows(api).idempotency_keys == 0
    accepted = post(api, hardware("pool-a"), **{"Idempotency-Key": KEY})
    assert accepted.status_code == 201, accepted.text


@pytest.mark.parametrize(
    "key",
    ["", "x" * 256, "clé-non-ascii", "tab\there"],
    ids=["empty", "too-long", "non-ascii", "control"],
)
def test_a_malformed_key_is_400_and_writes_nothing(api: Api, key: str) -> None:
    response = api.client.post(
        "/v1/evaluations",
        content=json.dumps(hardware("pool-a")).encode("utf-8"),
        headers=[
            (b"Authorization", f"Bearer {api.keys['ci']}".encode()),
            (b"Content-Type", b"application/json"),
            (b"Idempotency-Key", key.encode("utf-8")),
        ],
    )
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "Idempotency-Key"
    assert rows(api).decisions == 0


def test_the_longest_key_is_accepted(api: Api) -> None:
    response = post(api, hardware("pool-a"), **{"Idempotency-Key": "k" * 255})
    assert response.status_code == 201, response.text


def test_concurrent_repeats_share_one_decision(api: Api) -> None:
    doc = hardware("pool-a")
    workers = 20

    def send(_: int) -> tuple[int, bytes]:
        response = post(api, doc, **{"Idempotency-Key": KEY})
        return response.status_code, response.content

    with ThreadPoolExecutor(max_workers=workers) as pool:
        answers = list(pool.map(send, range(workers)))
    assert {status for status, _ in answers} == {201}
    assert len({content for _, content in answers}) == 1
    found = rows(api)
    assert (found.decisions, found.manifests, found.idempotency_keys) == (1, 1, 1)
