"""Both engines give identical decisions: the examples and generated manifests.

Every generated manifest goes through the same Python path as production (decode → Struct →
policy input) and is then evaluated by the in-process engine and by OPA; the answers must be
equal. The generated mix: default and generated matrices, refs to tracked and untracked pools,
inline hardware, evaluation times around the examples' date, and waivers.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supportgate.evaluations.evaluator import Subject
from supportgate.manifests import Manifest, decode_manifest, decode_matrix
from supportgate.matrix import prepare
from supportgate.policy import PolicyBundle
from supportgate.policy.catalog import read_catalog

from .. import strategies
from ..engines import EXAMPLE_TIME, Engines
from ..examples import expected

pytestmark = pytest.mark.opa

GENERATED_MANIFESTS = 1000

settings.register_profile(
    "parity",
    deadline=None,
    derandomize=os.environ.get("CI") == "true",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)


def _manifest(document: dict[str, Any]) -> Manifest:
    return decode_manifest(msgspec.json.encode(document), fmt="json")


waivers = st.lists(
    st.fixed_dictionaries(
        {
            "id": st.sampled_from(("w-1", "w-2", "w-3")),
            "rule": st.sampled_from(strategies.WAIVED_RULES),
            "expires_at": st.integers(-30, 30).map(
                lambda days: (
                    (EXAMPLE_TIME + timedelta(days=days)).isoformat().replace("+00:00", "Z")
                )
            ),
        }
    ),
    max_size=3,
)
moments = st.integers(-400, 400).map(lambda hours: EXAMPLE_TIME + timedelta(hours=hours))


def test_examples_agree(engines: Engines) -> None:
    subjects = [
        Subject(decode_manifest(path.read_bytes(), fmt="yaml")) for path in expected().files
    ]
    inputs = engines.inputs(engines.default, subjects, EXAMPLE_TIME)
    for policy_input in inputs:
        assert engines.embedded.evaluate(engines.default, policy_input) == engines.opa.evaluate(
            engines.default, policy_input
        )


def test_generated_manifests_agree(engines: Engines, policy_bundle: PolicyBundle) -> None:
    """1,000 generated manifests, identical on both engines; the mix must reach every rule
    id and every verdict, or the agreement would say little."""
    rules_seen: set[str] = set()
    verdicts_seen: set[str] = set()

    @settings(settings.get_profile("parity"), max_examples=GENERATED_MANIFESTS)
    @given(document=strategies.manifests(), at=moments, waived=waivers)
    def agree(document: dict[str, Any], at: Any, waived: list[dict[str, str]]) -> None:
        subject = Subject(_manifest(document), waivers=waived)
        (policy_input,) = engines.inputs(engines.default, [subject], at)
        embedded = engines.embedded.evaluate(engines.default, policy_input)
        assert embedded == engines.opa.evaluate(engines.default, policy_input)
        rules_seen.update(violation.rule for violation in embedded.violations)
        verdicts_seen.add(embedded.verdict)

    agree()
    assert verdicts_seen == {"supported", "experimental", "rejected"}
    assert set(read_catalog(policy_bundle.modules)) - rules_seen == set()


@settings(settings.get_profile("parity"), max_examples=100)
@given(
    matrix=strategies.matrices(), documents=st.lists(strategies.manifests(), min_size=1, max_size=6)
)
def test_generated_matrices_agree(
    engines: Engines, matrix: dict[str, Any], documents: list[dict[str, Any]]
) -> None:
    loaded = prepare(decode_matrix(msgspec.json.encode(matrix), fmt="json"))
    subjects = [Subject(_manifest(document)) for document in documents]
    inputs = engines.inputs(loaded, subjects, EXAMPLE_TIME)
    embedded = [engines.embedded.evaluate(loaded, item) for item in inputs]
    assert embedded == [engines.opa.evaluate(loaded, item) for item in inputs]
