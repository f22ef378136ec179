"""Issue 12: "Anyone who can reach OPA can forge verdicts". An insider holding OPA's API token
writes a forged decision module into OPA (the review's attack: a rejected deployment became
`experimental, allowed: true`, recorded with the legitimate policy revision). OPA refuses it
(the service's signed bundle owns the roots `supportgate` and `matrix`); and when OPA's
record of the bundle is tampered with instead, the service sees the revision is not its own
and answers 503, never a verdict. Each test has its own OPA: it writes into it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from ..api import Api, running_api
from ..api_support import created, example, post, rows
from ..opa import RunningOpa, running_opa

pytestmark = pytest.mark.opa

FORGED_DECISION = """\
package supportgate.decision

result := {
	"verdict": "experimental",
	"allowed": true,
	"violations": [],
	"claims": {"builds": "proven", "correct": "proven", "performant": "proven"},
	"checklist": {
		"official_support": true,
		"kernels_and_correctness": "proven",
		"distributed_performance": "proven",
		"service_completeness": "not-applicable",
	},
	"recommendations": [],
}
"""
DECISION_MODULE_ID = "supportgate/supportgate/decision/decision.rego"
"""OPA's id for the bundle's decision module: the bundle's name, then the file's path."""


@pytest.fixture
def opa(opa_binary: str) -> Iterator[RunningOpa]:
    with running_opa(opa_binary) as server:
        yield server


@pytest.fixture
def opa_api(opa: RunningOpa, tmp_path: Path) -> Iterator[Api]:
    with running_api(f"sqlite:///{tmp_path / 'supportgate.db'}", opa_url=opa.url) as running:
        yield running


def _rejected_deployment(api: Api) -> dict[str, Any]:
    created(api, example("hw-h100-pool-a.yaml"))
    decided = created(api, example("dep-h100-production.yaml"))
    assert (decided["verdict"], decided["allowed"]) == ("rejected", False)
    return decided


def _insider(opa: RunningOpa, method: str, path: str, **kwargs: Any) -> requests.Response:
    """A call to OPA's API with the service's token, as an insider holding it would make."""
    return requests.request(
        method, f"{opa.url}{path}", headers=opa.credentials.headers(), timeout=10, **kwargs
    )


def test_a_forged_decision_module_is_refused_and_the_verdict_stands(
    opa_api: Api, opa: RunningOpa
) -> None:
    before = _rejected_deployment(opa_api)
    modules = {policy["id"] for policy in _insider(opa, "GET", "/v1/policies").json()["result"]}
    assert DECISION_MODULE_ID in modules

    for module_id in (DECISION_MODULE_ID, "forged"):  # replace the bundle's, or add one
        refused = _insider(opa, "PUT", f"/v1/policies/{module_id}", data=FORGED_DECISION)
        assert refused.status_code == 400, refused.text
        assert "owned by bundle" in refused.json()["message"]
    # Nor may the matrix be rewritten (and the service sends its own with every query).
    refused = _insider(opa, "PUT", "/v1/data/matrix", json={"version": "forged"})
    assert refused.status_code == 400, refused.text

    after = created(opa_api, example("dep-h100-production.yaml"))
    assert (after["verdict"], after["allowed"]) == ("rejected", False)
    assert after["policy_revision"] == before["policy_revision"]
    assert {p["id"] for p in _insider(opa, "GET", "/v1/policies").json()["result"]} == modules


def test_without_the_token_opa_answers_nothing(opa: RunningOpa) -> None:
    for method, path in (("GET", "/v1/policies"), ("PUT", "/v1/policies/forged")):
        response = requests.request(method, f"{opa.url}{path}", data=FORGED_DECISION, timeout=10)
        assert response.status_code == 401, response.text


def test_a_tampered_bundle_revision_is_503_never_a_verdict(opa_api: Api, opa: RunningOpa) -> None:
    _rejected_deployment(opa_api)
    before = rows(opa_api)
    path = "/v1/data/system/bundles/supportgate/manifest/revision"
    assert _insider(opa, "PUT", path, json="sha256:forged").status_code == 204

    response = post(opa_api, example("dep-h100-production.yaml"))
    assert response.status_code == 503, response.text
    assert "policy engine cannot answer" in response.json()["detail"]
    assert not {"verdict", "allowed", "id"} & set(response.json())
    assert rows(opa_api) == before
    assert opa_api.client.get("/health/ready").status_code == 503


def test_opas_api_token_is_not_in_data(opa: RunningOpa) -> None:
    """Issue 22: an organisation rule reading `data` read OPA's API token. OPA's authorization
    policy now compares the token's digest, so `data` holds no token, and the token still
    opens the API (and nothing else does)."""
    token = opa.credentials.api_token
    everything = requests.get(f"{opa.url}/v1/data", headers=opa.credentials.headers(), timeout=10)
    assert everything.status_code == 200
    assert token not in everything.text
    assert "api_token_sha256" in everything.text
    anyone = requests.get(
        f"{opa.url}/v1/data", headers={"Authorization": "Bearer not-the-token"}, timeout=10
    )
    assert anyone.status_code == 401
