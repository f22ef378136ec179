"""Alerts say why (issue 21 part 7, issue 23 part 9): a fleet recorded under the built-in
policies, a service started with an organisation bundle added, its sweep (cause `policy`),
and the alert, GET /v1/alerts and the webhook's body alike, naming the rules the decision
gained and lost with their messages."""

from __future__ import annotations

import json
from typing import Any

from ..api import Api, running_api
from ..api_support import created, example
from ..examples import ACME
from ..receiver import Receiver, verify
from ..waiting import wait_until


def alerts(api: Api) -> list[dict[str, Any]]:
    response = api.client.get("/v1/alerts", headers=api.headers("procurement"))
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def test_a_policy_change_alerts_name_the_rules_gained_and_lost(
    migrated_db_url: str, receiver: Receiver
) -> None:
    with running_api(migrated_db_url) as before:
        subscription = before.client.post(
            "/v1/webhooks", json={"url": receiver.url}, headers=before.headers("admin")
        ).json()
        created(before, example("hw-b200-pool.yaml"))
        old = created(before, example("dep-b200-offline.yaml"))
        assert old["verdict"] != "rejected"
        assert alerts(before) == []

    with running_api(migrated_db_url, key_suffix="-2", policy_bundles=(ACME,)) as after:
        assert after.runtime.reevaluation.wait_idle()
        [alert] = wait_until(lambda: alerts(after), "the policy sweep's alert")
        assert alert["manifest"] == old["manifest"]
        assert (alert["from"], alert["to"], alert["cause"]) == (
            old["verdict"],
            "rejected",
            "policy",
        )
        [gained] = [v for v in alert["gained"] if v["rule"] == "org.acme.decode-replicas"]
        assert gained["severity"] == "deny"
        assert gained["message"]
        assert all(v["severity"] != "deny" for v in alert["lost"])

        [request] = wait_until(receiver.received, "the alert's delivery")
        assert verify(subscription["secret"], request)
        body = json.loads(request.body)
        assert body["type"] == "verdict.changed"
        assert body["data"] == alert
