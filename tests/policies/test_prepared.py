"""data.supportgate.prepared: what Python derives from a matrix for the policies."""

from __future__ import annotations

import json

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.policy import PolicyBundle
from supportgate.policy.prepared import prepared_document, version_key

from ..engines import default_matrix

PREPARED_FILE = DEFAULT_POLICY_DIR / "supportgate" / "prepared" / "data.json"


def test_version_keys_compare_as_versions() -> None:
    assert version_key("560.35.03") == [560, 35, 3, 0]
    assert version_key("13") == version_key("13.0.0.0")
    assert version_key("12.8") < version_key("13") < version_key("13.0.1")


def test_the_rego_tests_prepared_data_is_the_default_matrix_s(policy_bundle: PolicyBundle) -> None:
    """`opa test policies` reads data.supportgate.prepared from this file: it must be what
    Python prepares from the default matrix."""
    matrix = default_matrix(policy_bundle)
    expected = prepared_document(matrix.document)
    assert json.loads(PREPARED_FILE.read_text()) == expected, (
        f"rewrite {PREPARED_FILE} as prepared_document(default matrix), json indent 2, sorted"
    )
    assert json.loads(matrix.prepared) == expected
