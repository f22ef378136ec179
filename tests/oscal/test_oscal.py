"""GET /v1/reports/oscal on SQLite and PostgreSQL: the fleet as an OSCAL Assessment Results
document that compliance-trestle's models load, one observation per tracked manifest and
one finding per rule a decision violates (waived ones marked), the basis in import-ap, the
same bytes for the same fleet at the same time, procurement may read it, a bad `as_of` is a
400 naming it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from trestle.oscal.assessment_results import AssessmentResults, Model

from ..api import Api
from ..api_support import created, example, post_examples
from ..examples import expected
from ..waivers.test_waivers import PROD, waiver

PATH = "/v1/reports/oscal"


def _report(api: Api, role: str = "procurement", **params: str) -> Any:
    response = api.client.get(PATH, params=params, headers=api.headers(role))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return response


def _loaded(text: str) -> AssessmentResults:
    """The document through trestle's models: refuses any shape OSCAL does not allow."""
    return Model.model_validate_json(text).assessment_results


def _props(item: Any) -> dict[str, str]:
    return {prop.name: prop.value for prop in item.props or []}


def test_the_fleet_is_an_assessment_results_document_trestle_loads(api: Api) -> None:
    decisions = post_examples(api)
    by_key = {(d["manifest"]["kind"], d["manifest"]["name"]): d for d in decisions}
    tracked = api.client.get(
        "/v1/manifests", params={"limit": 500}, headers=api.headers("procurement")
    ).json()["items"]
    assert len(tracked) == len(by_key) > 5

    results = _loaded(_report(api).text)
    assert results.metadata.oscal_version.root.root == "1.2.1"
    [result] = results.results
    observations = result.observations or []
    assert len(observations) == len(tracked)
    observed = {(_props(o)["decision-id"], _props(o)["verdict"]) for o in observations}
    latest = {(d["id"], d["verdict"]) for d in by_key.values()}
    assert observed == latest

    # One finding per (manifest, rule) the latest decision violates, tied to its observation.
    violated = {
        (d["id"], v["rule"], v["severity"]) for d in by_key.values() for v in d["violations"]
    }
    observation_decision = {o.uuid: _props(o)["decision-id"] for o in observations}
    findings = result.findings or []
    found = set()
    for finding in findings:
        [related] = finding.related_observations or []
        props = _props(finding)
        found.add(
            (observation_decision[related.observation_uuid], props["rule"], props["severity"])
        )
        assert finding.target.target_id == props["rule"]  # the built-in ids are tokens
        assert finding.target.status is not None
        assert finding.target.status.state.value == "not-satisfied"
    assert found == violated
    assert len(findings) == len(violated)

    # The basis: the matrix version and policy revision in force, in import-ap's resource.
    matrix = api.runtime.matrices.current().version
    revision = api.runtime.engine.policy_revision
    assert results.back_matter is not None
    [basis] = results.back_matter.resources or []
    assert results.import_ap.href == f"#{basis.uuid}"
    assert revision in (result.reviewed_controls.description or "")
    for item in (basis, result):
        assert _props(item)["matrix-version"] == matrix
        assert _props(item)["policy-revision"] == revision


def test_a_waived_rule_is_a_finding_marked_waived(api: Api) -> None:
    created(api, example("hw-h100-pool-a.yaml"))
    body = waiver(api)
    decision = created(api, example(PROD))
    assert {v["severity"] for v in decision["violations"] if v["rule"] == "port.production"} == {
        "waived"
    }

    result = _loaded(_report(api).text).results[0]
    [waived] = [f for f in result.findings or [] if _props(f)["rule"] == "port.production"]
    assert _props(waived)["severity"] == "waived"
    assert _props(waived)["waiver-id"] == body["id"]
    assert waived.target.status is not None
    assert waived.target.status.reason == "other"
    denied = [f for f in result.findings or [] if _props(f)["severity"] == "deny"]
    assert all(f.target.status and f.target.status.reason == "fail" for f in denied)


def test_the_same_fleet_at_the_same_time_gives_the_same_document(api: Api) -> None:
    post_examples(api)
    at = datetime.now(UTC).isoformat().replace("+00:00", "Z")  # every example recorded
    first = _report(api, as_of=at).content
    assert _report(api, as_of=at).content == first
    assert len(_loaded(first.decode()).results[0].observations or []) == len(expected().files)
    earlier = (datetime.now(UTC) - timedelta(minutes=2)).isoformat().replace("+00:00", "Z")
    other = _loaded(_report(api, as_of=earlier).text)
    assert other.uuid != _loaded(first.decode()).uuid  # another time, another document
    assert other.results[0].observations is None  # nothing was recorded yet then

    # A new decision changes the document of a later time and that manifest's observation,
    # not the rest; the document of the time before it stays what it was.
    before = _loaded(first.decode()).results[0].observations or []
    created(api, example("hw-h100-pool-a.yaml"))
    later = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    after = _loaded(_report(api, as_of=later).text).results[0].observations or []
    changed = {o.uuid for o in before} ^ {o.uuid for o in after}
    assert len(changed) == 2
    assert _report(api, as_of=at).content == first


def test_an_empty_fleet_is_a_valid_document(api: Api) -> None:
    result = _loaded(_report(api).text).results[0]
    assert result.observations is None
    assert result.findings is None


@pytest.mark.parametrize("role", ["procurement", "admin"])
def test_procurement_and_admins_may_read_it(api: Api, role: str) -> None:
    _report(api, role=role)


def test_ci_may_not_and_no_key_is_refused(api: Api) -> None:
    assert api.client.get(PATH, headers=api.headers("ci")).status_code == 403
    assert api.client.get(PATH).status_code == 401


@pytest.mark.parametrize(
    "as_of",
    [
        "yesterday",
        "2026-11-30",  # no time
        "2026-11-30T00:00:00",  # no time zone
        "2026-13-01T00:00:00Z",
        "2999-01-01T00:00:00Z",  # after now: not known yet
    ],
)
def test_a_bad_as_of_is_a_400_naming_it(shared_api: Api, as_of: str) -> None:
    response = shared_api.client.get(
        PATH, params={"as_of": as_of}, headers=shared_api.headers("procurement")
    )
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "as_of"


def test_the_document_says_its_time(api: Api) -> None:
    at = "2026-11-30T12:00:00Z"
    results = _loaded(_report(api, as_of=at).text)
    start = results.results[0].start
    assert start == datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert (
        json.loads(_report(api, as_of=at).text)["assessment-results"]["results"][0]["start"] == at
    )


def test_warnings_are_told_from_violated_rules(api: Api) -> None:
    """A pool on an unlisted platform draws only warnings: nothing is called violated."""
    created(api, example("hw-h100-pool-a.yaml"))
    [result] = _loaded(_report(api).text).results
    [observation] = result.observations or []
    assert "no rule violated" in observation.description, observation.description
    assert "warning" in observation.description
    findings = result.findings or []
    assert findings
    for finding in findings:
        assert _props(finding)["severity"] == "warn"
        assert "violat" not in f"{finding.title} {finding.description}".lower(), finding
        assert "warning" in finding.description
        assert finding.target.status is not None
        assert finding.target.status.reason == "other"
