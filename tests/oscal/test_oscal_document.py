"""The OSCAL document as a pure function of the fleet at a time (supportgate/oscal/document.py):
compliance-trestle's models load it for any fleet (odd rule ids, owners, messages), its
UUIDs are derived (same fleet, same bytes, whatever the order), and it says its basis."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trestle.oscal.assessment_results import AssessmentResults, Model

from supportgate.fleet.query import FleetAt, FleetManifest
from supportgate.manifests.decision import Decision, ManifestRef, Violation
from supportgate.oscal.document import assessment_results

from ..decisions import PROVEN_CHECKLIST, PROVEN_CLAIMS

pytestmark = pytest.mark.fast

AS_OF = datetime(2026, 11, 30, 12, tzinfo=UTC)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), min_size=0, max_size=30)


def _load(document: bytes) -> AssessmentResults:
    return Model.model_validate_json(document).assessment_results


def _document(fleet: FleetAt) -> bytes:
    return assessment_results(fleet, policy_revision="sha256:" + "b" * 64)


def _tracked(
    *,
    kind: str,
    name: str,
    owner: str | None,
    decision_id: str,
    verdict: str,
    evaluated_at: datetime,
    matrix_version: str,
    leaf_index: int | None,
    violations: tuple[Violation, ...],
) -> FleetManifest:
    decision = Decision(
        id=decision_id,
        manifest=ManifestRef(kind=kind, name=name),  # type: ignore[arg-type]
        verdict=verdict,  # type: ignore[arg-type]
        allowed=verdict != "rejected",
        violations=violations,
        claims=PROVEN_CLAIMS,
        checklist=PROVEN_CHECKLIST,
        recommendations=(),
        matrix_version=matrix_version,
        policy_revision="sha256:" + "a" * 64,
        input_digest="sha256:" + "c" * 64,
        evaluated_at=evaluated_at,
        cause="submission",
        leaf_index=leaf_index,
    )
    return FleetManifest(kind=kind, name=name, owner=owner, decision=decision, policy_input="{}")


def _manifest(name: str, *violations: Violation, decision: str = "d-1") -> FleetManifest:
    verdict = "rejected" if any(v.severity == "deny" for v in violations) else "supported"
    return _tracked(
        kind="DeploymentManifest",
        name=name,
        owner="ml-platform",
        decision_id=decision,
        verdict=verdict,
        evaluated_at=AS_OF - timedelta(days=1),
        matrix_version="2026.11.1",
        leaf_index=3,
        violations=violations,
    )


def _fleet(*manifests: FleetManifest, matrix: str | None = "2026.11.1") -> FleetAt:
    return FleetAt(
        as_of=AS_OF,
        matrix_version=matrix,
        policy_revision="sha256:" + "b" * 64,
        manifests=manifests,
    )


violations = st.builds(
    Violation,
    rule=TEXT,
    severity=st.sampled_from(["deny", "warn", "waived"]),
    message=TEXT,
    path=TEXT,
    waiver_id=st.none() | TEXT,
)
manifests = st.builds(
    _tracked,
    kind=st.sampled_from(["HardwareManifest", "DeploymentManifest"]),
    name=TEXT,
    owner=st.none() | TEXT,
    decision_id=TEXT,
    verdict=st.sampled_from(["supported", "experimental", "rejected"]),
    evaluated_at=st.datetimes(timezones=st.just(UTC)),
    matrix_version=TEXT,
    leaf_index=st.none() | st.integers(min_value=0, max_value=2**40),
    violations=st.lists(violations, max_size=4).map(tuple),
)


@settings(max_examples=60, deadline=None)
@given(
    fleet=st.builds(
        FleetAt,
        as_of=st.datetimes(timezones=st.just(UTC)),
        matrix_version=st.none() | TEXT,
        policy_revision=st.none() | TEXT,
        manifests=st.lists(manifests, max_size=4, unique_by=lambda m: (m.kind, m.name)).map(tuple),
    ),
    revision=TEXT,
)
def test_trestle_loads_the_document_of_any_fleet(fleet: FleetAt, revision: str) -> None:
    result = _load(assessment_results(fleet, policy_revision=revision)).results[0]
    assert len(result.observations or []) == len(fleet.manifests)
    rules = {(m.kind, m.name, v.rule) for m in fleet.manifests for v in m.decision.violations}
    assert len(result.findings or []) == len(rules)


def test_the_same_fleet_in_another_order_gives_the_same_bytes() -> None:
    deny = Violation(rule="port.pinning", severity="deny", message="pin it", path="spec.port")
    a, b = _manifest("a", deny), _manifest("b")
    assert _document(_fleet(a, b)) == _document(_fleet(b, a))
    # Another decision for `a`: its observation and finding get other UUIDs, b's stay.
    before = _load(_document(_fleet(a, b))).results[0]
    after = _load(_document(_fleet(_manifest("a", deny, decision="d-2"), b))).results[0]
    assert {o.uuid for o in before.observations or []} ^ {
        o.uuid for o in after.observations or []
    } == {before.observations[0].uuid, after.observations[0].uuid}  # type: ignore[index]
    # The subject (the manifest itself) keeps its UUID across decisions.
    [item_before, _] = before.local_definitions.inventory_items  # type: ignore[union-attr,misc]
    [item_after, _] = after.local_definitions.inventory_items  # type: ignore[union-attr,misc]
    assert item_before.uuid == item_after.uuid


def test_several_violations_of_one_rule_are_one_finding() -> None:
    first = Violation(rule="claims.correctness", severity="warn", message="one", path="x")
    second = Violation(rule="claims.correctness", severity="warn", message="two", path="y")
    [finding] = _load(_document(_fleet(_manifest("a", first, second)))).results[0].findings  # type: ignore[misc]
    assert "one" in finding.description
    assert "two" in finding.description
    assert finding.target.status is not None
    assert finding.target.status.reason == "other"


def test_a_rule_id_that_is_no_token_is_made_one_and_kept_in_a_prop() -> None:
    odd = Violation(rule="org.acme/no spaces", severity="deny", message="m", path="")
    [finding] = _load(_document(_fleet(_manifest("a", odd)))).results[0].findings  # type: ignore[misc]
    assert finding.target.target_id == "org.acme_no_spaces"
    assert {p.name: p.value for p in finding.props or []}["rule"] == "org.acme/no spaces"


def test_no_matrix_in_force_leaves_its_prop_out() -> None:
    document = msgspec.json.decode(_document(_fleet(matrix=None)))
    props = document["assessment-results"]["results"][0]["props"]
    assert "matrix-version" not in {p["name"] for p in props}
    _load(_document(_fleet(matrix=None)))
