"""data.supportgate.prepared: what Python derives from a matrix for the policies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import regorus

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.policy import PolicyBundle
from supportgate.policy.prepared import prepared_document, range_text, version_key

from ..engines import default_matrix

pytestmark = pytest.mark.fast

PREPARED_FILE = DEFAULT_POLICY_DIR / "supportgate" / "prepared" / "data.json"


def test_version_keys_compare_as_versions() -> None:
    assert version_key("560.35.03") == [[3, "560"], [2, "35"], [1, "3"]]
    assert version_key("13.0.0.0") == version_key("13") == [[2, "13"]]
    assert version_key("0.0") == [[0, ""]]
    assert version_key("9.10") > version_key("9.9")
    assert version_key("12.8") < version_key("13") < version_key("13.0.1")


def test_open_sides_are_the_bounds_in_range_reads_as_open(policy_bundle: PolicyBundle) -> None:
    """Python writes an open side as the library's open_min and open_below, which in_range
    compares with every key as open."""
    engine = regorus.Engine()
    for name, text in policy_bundle.modules:
        engine.add_policy(name, text)
    versions = {
        side: json.loads(engine.eval_rule_as_json(f"data.supportgate.lib.open_{side}"))
        for side in ("min", "below")
    }
    assert prepared_document({"engines": {"e": {"host": {"python": {}}}}})["engines"]["e"][
        "python"
    ] == {"min": versions["min"], "below": versions["below"]}


def test_range_texts() -> None:
    assert range_text({"min": "3.12", "below": "3.13"}) == ">= 3.12, < 3.13"
    assert range_text({"min": "13"}) == ">= 13"
    assert range_text({"below": "14"}) == "< 14"
    assert range_text({}) == "any version"


def test_the_rego_tests_prepared_data_is_the_default_matrix_s(policy_bundle: PolicyBundle) -> None:
    """`opa test policies` reads data.supportgate.prepared from this file: it must be what
    Python prepares from the default matrix."""
    matrix = default_matrix(policy_bundle)
    expected = prepared_document(matrix.document)
    assert json.loads(PREPARED_FILE.read_text()) == expected, (
        f"rewrite {PREPARED_FILE} as prepared_document(default matrix), json indent 2, sorted"
    )
    assert json.loads(matrix.prepared) == expected


def test_engine_texts_name_what_the_matrix_leaves_out(policy_bundle: PolicyBundle) -> None:
    """The recommendations quote these texts; an engine without a reference topology or
    architecture-dependent dependencies gets the generic wording."""
    document = default_matrix(policy_bundle).document
    texts = prepared_document(document)["engines"]["deepinfer"]["texts"]
    assert texts["reference_topology"] == "the reference topology of 4 prefill and 64 decode GPUs"
    assert texts["arch_dependencies"] == "flashmla, deepgemm, deepep, tilelang"
    bare = dict(document["engines"]["deepinfer"])
    del bare["reference_topology"]
    bare["arch_dependencies"] = []
    texts = prepared_document({"engines": {"deepinfer": bare}})["engines"]["deepinfer"]["texts"]
    assert texts["reference_topology"] == "the engine's reference topology"
    assert texts["arch_dependencies"] == "the architecture-dependent dependencies"


def test_alternatives_are_listed_per_platform_in_matrix_order() -> None:
    alternatives = [
        {"name": "vllm", "platforms": [{"vendor": "nvidia", "arch": "sm90"}] * 2},
        {"name": "sglang", "platforms": [{"vendor": "amd", "arch": "gfx942"}]},
        {"name": "tgi", "platforms": [{"vendor": "nvidia", "arch": "sm90"}]},
    ]
    prepared = prepared_document({"engines": {}, "alternatives": alternatives})
    expected = {"nvidia": {"sm90": "vllm, tgi"}, "amd": {"gfx942": "sglang"}}
    assert prepared["alternatives"] == expected


PREPARED_IN_REGO = Path(__file__).with_name("prepared_in_rego.rego")
PREPARED_KEYS = (
    "engines",
    "known_engines_text",
    "alternatives",
    "engine_names",
    "alternative_runtimes",
    "accelerators",
)


def prepared_in_rego(matrix: dict[str, Any]) -> dict[str, Any]:
    """data.supportgate.prepared as the Rego derivation (the plain path) makes it."""
    engine = regorus.Engine()
    engine.add_policy(PREPARED_IN_REGO.name, PREPARED_IN_REGO.read_text())
    engine.add_data_json(json.dumps({"matrix": matrix}))
    return {
        key: json.loads(engine.eval_rule_as_json(f"data.supportgate.prepared.{key}"))
        for key in PREPARED_KEYS
    }


def test_python_prepares_what_the_policies_would_derive_from_the_matrix(
    policy_bundle: PolicyBundle,
) -> None:
    """The prepared data is a speed device (docs/performance.md, Speed devices): its plain
    path, the same data derived in Rego from the matrix as published, is its oracle."""
    document = json.loads(default_matrix(policy_bundle).canonical)
    bare = json.loads(json.dumps(document))
    del bare["accelerators"], bare["alternatives"]
    engine = bare["engines"]["deepinfer"]
    del engine["reference_topology"], engine["host"]["compiler"]
    engine["arch_dependencies"] = []
    engine["platforms"][0]["toolkit"] = {"name": "cuda", "min": "13.0.0", "below": "14.00.1"}
    for matrix in (document, bare):
        assert prepared_in_rego(matrix) == prepared_document(matrix)
