"""What the decoder refuses because the policies could not judge it, each naming its field:
integers of any size or spelling beyond 2**53 - 1, numbers beyond a double, and times outside
the years 1678 to 2261 in UTC (64-bit nanoseconds since 1970, as the policies compare them)."""

from __future__ import annotations

import json

import pytest
import yaml

from supportgate.errors import ManifestError
from supportgate.manifests import DeploymentManifest, HardwareManifest, decode_manifest
from supportgate.manifests.decode import Format, decode_json
from supportgate.waivers.views import WaiverRequest

pytestmark = pytest.mark.fast

MAX_SAFE_INTEGER = 2**53 - 1  # the largest integer both policy engines read exactly

HARDWARE = """\
apiVersion: supportgate/v1
kind: HardwareManifest
metadata: {name: pool, owner: infra, labels: {rack: r1}}
spec:
  accelerator: {vendor: ascend, model: Ascend 950, arch: "950", per_node: 16, memory_gib: 64}
  nodes: 4
  toolkit: {name: cann, version: "9.2"}
  python: "3.12.9"
"""
DEPLOYMENT = """\
apiVersion: supportgate/v1
kind: DeploymentManifest
metadata: {name: trial}
spec:
  hardware: {ref: pool}
  engine: {name: deepinfer, version: "1.0.0"}
  model: {name: DeepSeek-V4.1-Flash}
  stage: evaluation
  mode: offline
  topology: {prefill_gpus: 4, decode_gpus: 4}
  evidence: {build: {status: passed, at: "AT"}}
"""


def _refused(data: bytes, fmt: Format) -> ManifestError:
    with pytest.raises(ManifestError) as caught:
        decode_manifest(data, fmt=fmt)
    return caught.value


def _hardware(old: str, new: str, fmt: Format) -> bytes:
    """The hardware manifest with the entry `old` (`key: value`) replaced by `new`, written
    as YAML or JSON (`new`'s value as written, a number in either)."""
    assert old in HARDWARE
    if fmt == "yaml":
        return HARDWARE.replace(old, new, 1).encode()
    key, value = old.split(": ", 1)
    new_key, new_value = new.split(": ", 1)
    as_json = json.dumps(yaml.safe_load(HARDWARE))
    assert f'"{key}": {value}' in as_json
    return as_json.replace(f'"{key}": {value}', f'"{new_key}": {new_value}', 1).encode()


TOO_LARGE = [
    "9" * 5000,  # Python will not turn over 4300 digits into an int
    "1" + "0" * 310,  # beyond a double: the policy engines could not read it
    str(MAX_SAFE_INTEGER + 1),  # read inexactly (as a double) by a policy engine
    "-" + str(MAX_SAFE_INTEGER + 1),
    "1e999",
]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
@pytest.mark.parametrize("number", TOO_LARGE, ids=lambda n: n[:12])
def test_an_integer_field_refuses_numbers_beyond_the_safe_range(fmt: Format, number: str) -> None:
    if fmt == "yaml" and number == "1e999":
        number = "1.0e999"  # YAML reads 1e999 as text, refused too (as not a number)
    error = _refused(_hardware("nodes: 4", f"nodes: {number}", fmt), fmt)
    assert error.path == "$.spec.nodes"
    assert len(error.message) < 300  # a 5,000-digit number is not quoted whole


@pytest.mark.parametrize(
    "number", ["0x" + "f" * 20_000, "0o" + "7" * 20_000, "0x20000000000000", "-" + "9" * 5000]
)
def test_yaml_integers_of_any_spelling_are_refused_naming_the_field(number: str) -> None:
    error = _refused(_hardware("nodes: 4", f"nodes: {number}", "yaml"), "yaml")
    assert error.path == "$.spec.nodes"


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_the_largest_safe_integer_is_accepted(fmt: Format) -> None:
    manifest = decode_manifest(_hardware("nodes: 4", f"nodes: {MAX_SAFE_INTEGER}", fmt), fmt=fmt)
    assert isinstance(manifest, HardwareManifest)
    assert manifest.spec.nodes == MAX_SAFE_INTEGER


def test_leading_zeros_do_not_count_as_digits() -> None:
    manifest = decode_manifest(
        _hardware("nodes: 4", "nodes: 0x" + "0" * 20_000 + "8", "yaml"), fmt="yaml"
    )
    assert isinstance(manifest, HardwareManifest)
    assert manifest.spec.nodes == 8


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_a_float_field_takes_any_finite_double_however_written(fmt: Format) -> None:
    for written, value in [("1" + "0" * 100, 1e100), ("1.5e300", 1.5e300)]:
        data = _hardware("memory_gib: 64", f"memory_gib: {written}", fmt)
        manifest = decode_manifest(data, fmt=fmt)
        assert isinstance(manifest, HardwareManifest)
        assert manifest.spec.accelerator.memory_gib == value
    error = _refused(_hardware("memory_gib: 64", "memory_gib: " + "9" * 400, fmt), fmt)
    assert error.path == "$.spec.accelerator.memory_gib"


def test_a_long_yaml_number_where_text_is_wanted_is_its_text() -> None:
    label = "9" * 5000
    manifest = decode_manifest(_hardware("rack: r1", f"rack: {label}", "yaml"), fmt="yaml")
    assert isinstance(manifest, HardwareManifest)
    assert manifest.metadata.labels == {"rack": label}


def _deployment(at: str) -> bytes:
    return DEPLOYMENT.replace("AT", at).encode()


@pytest.mark.parametrize(
    ("at", "accepted"),
    [
        ("1678-01-01T00:00:00Z", True),
        ("1678-01-01T05:00:00-00:00", True),
        ("1678-01-02T00:00:00+14:00", True),
        ("2261-12-31T23:59:59.999999Z", True),  # .9999995 and more: msgspec rounds up to 2262
        ("2261-12-30T23:00:00-14:00", True),
        ("1677-12-31T23:59:59Z", False),
        ("1600-01-01T00:00:00Z", False),
        ("0001-01-01T00:00:00Z", False),
        ("1678-01-01T05:00:00+01:00", False),  # 04:00Z would do, but the rule is simple
        ("1678-01-01T00:00:00+14:00", False),  # 1677-12-31T10:00:00Z
        ("2261-12-31T00:00:00-01:00", False),
        ("2262-01-01T00:00:00Z", False),
        ("9999-12-31T23:59:59Z", False),
    ],
)
def test_times_must_lie_in_the_years_the_policies_compare(at: str, accepted: bool) -> None:
    for data, fmt in [
        (_deployment(at), "yaml"),
        (json.dumps(yaml.safe_load(_deployment(at))).encode(), "json"),
    ]:
        if accepted:
            manifest = decode_manifest(data, fmt=fmt)  # type: ignore[arg-type]
            assert isinstance(manifest, DeploymentManifest)
            assert manifest.spec.evidence is not None
            assert manifest.spec.evidence.build is not None
            assert manifest.spec.evidence.build.at is not None
            assert 1678 <= manifest.spec.evidence.build.at.year <= 2261
        else:
            error = _refused(data, fmt)  # type: ignore[arg-type]
            assert error.path == "$.spec.evidence.build.at"


WAIVER = {
    "rule": "port.production",
    "kind": "DeploymentManifest",
    "name": "trial",
    "justification": "why",
    "expires_at": "2030-01-01T00:00:00Z",
}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (json.dumps(WAIVER)[:-1] + ', "rule": "x"}', "$.rule"),  # Litestar kept the last one
        (json.dumps({**WAIVER, "justification": "a\x00b"}), "$.justification"),
        (json.dumps(WAIVER).replace('"why"', '"\\ud800"'), "$.justification"),
        (json.dumps(WAIVER).replace('"trial"', "1" + "0" * 5000), "$.name"),
        ("{", "$"),
    ],
)
def test_json_request_bodies_follow_the_manifests_rules(body: str, field: str) -> None:
    with pytest.raises(ManifestError) as caught:
        decode_json(body.encode(), WaiverRequest)
    assert caught.value.path == field
