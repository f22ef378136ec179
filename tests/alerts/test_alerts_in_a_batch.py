"""The alerts of one batch (the writer commits a group of requests as one): each decision is
held against the one before it, the tracked manifest's latest for the first, the batch's own
for the rest; the latest decision's rules are read back only where its verdict changes."""

from __future__ import annotations

from typing import Any

import msgspec

from supportgate.ledger.batches import Batch, DecisionWrite, Tracking

from ..api import Api
from ..audit.test_audit import record


def tracked(write: DecisionWrite) -> DecisionWrite:
    """`write` as a submission makes it: with content to track."""
    manifest = write.decision.manifest
    content = {"kind": manifest.kind, "metadata": {"name": manifest.name}}
    tracking = Tracking(content=content, content_digest="d", owner=None, hardware_ref=None)
    return msgspec.structs.replace(write, tracking=tracking)


def alerts(api: Api) -> list[dict[str, Any]]:
    response = api.client.get("/v1/alerts", headers=api.headers("procurement"))
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def test_a_batch_alerts_each_change_against_the_decision_before_it(api: Api) -> None:
    denied = [("port.production", "deny")]
    api.runtime.ledger.write(
        Batch(
            decisions=[
                tracked(record("dep-a", verdict="supported")),
                tracked(record("dep-b", verdict="rejected", rules=denied)),
            ]
        )
    )
    assert alerts(api) == []
    verdicts = ("supported", "rejected", "rejected", "supported")
    api.runtime.ledger.write(
        Batch(
            decisions=[
                *(
                    tracked(record("dep-a", verdict=v, rules=denied if v == "rejected" else ()))
                    for v in verdicts
                ),
                tracked(record("dep-b", verdict="experimental")),
            ]
        )
    )
    found = {(a["manifest"]["name"], a["from"], a["to"]): a for a in alerts(api)}
    assert sorted(found) == [
        ("dep-a", "rejected", "supported"),
        ("dep-a", "supported", "rejected"),
        ("dep-b", "rejected", "experimental"),
    ]
    gained = found["dep-a", "supported", "rejected"]
    lost = found["dep-a", "rejected", "supported"]
    read_back = found["dep-b", "rejected", "experimental"]
    assert [v["rule"] for v in gained["gained"]] == ["port.production"]
    assert [v["rule"] for v in lost["lost"]] == ["port.production"]
    assert [v["rule"] for v in read_back["lost"]] == ["port.production"]  # the stored decision's
