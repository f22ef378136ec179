"""The contract Structs: the examples, validation with JSON paths, the canonical form."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

import msgspec
import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from supportgate.errors import ManifestError
from supportgate.manifests import (
    DeploymentManifest,
    Format,
    HardwareManifest,
    Matrix,
    decode_manifest,
    decode_manifests,
    decode_matrix,
    to_builtins,
)
from supportgate.manifests.common import Component, version_key
from supportgate.manifests.deployment import EvidenceItem
from supportgate.matrix import prepare
from supportgate.policy.engine import LoadedMatrix
from supportgate.policy.inputs import build_input, canonical_digest
from tests.examples import expected
from tests.strategies import manifests, matrices

pytestmark = pytest.mark.fast

HARDWARE = """\
apiVersion: supportgate/v1
kind: HardwareManifest
metadata: {name: h100-pool-a, owner: infra, labels: {site: fra1}}
spec:
  accelerator: {vendor: nvidia, model: H100-SXM5-80GB, arch: sm90, memory_gib: 80, per_node: 8}
  nodes: 8
  interconnect: {scale_up_domain: 8, fabric: nvlink4}
  toolkit: {name: cuda, version: "12.8"}
  driver: "570.86.15"
  os: {name: linux, distribution: ubuntu-22.04, kernel: "6.8.0"}
  compiler: {name: gcc, version: "13.2.0"}
  python: "3.12.3"
"""

DEPLOYMENT = """\
apiVersion: supportgate/v1
kind: DeploymentManifest
metadata: {name: v41-flash-h100-trial}
spec:
  hardware: {ref: h100-pool-a}
  engine: {name: deepinfer, version: "1.0.0", commit: 3f2a9c1}
  model: {name: DeepSeek-V4.1-Flash, quantization: fp8}
  stage: experimental
  mode: offline
  topology: {prefill_gpus: 4, decode_gpus: 4}
  service:
    kv_cache: {source: external, provider: lmcache, persistent: true}
  port:
    isolated_branch: true
    arch_dependencies: {flashmla: ported, deepep: unported}
  evidence:
    build: {status: passed, at: "2026-11-20T10:00:00Z", ref: "ci://builds/812"}
    performance: {status: absent, prefill_latency_ms: 0, concurrency: 0}
"""

MATRIX = """\
version: "2026.11.1"
effective_from: "2026-11-01T00:00:00Z"
evidence_max_age_days: 90
engines:
  deepinfer:
    models: [DeepSeek-V4.1-Flash]
    platforms:
      - {vendor: nvidia, arch: sm100, toolkit: {name: cuda, min: "13.0", below: "14"}}
      - {vendor: ascend, arch: "950", toolkit: {name: cann, min: "9.2", below: "9.3"}}
    host:
      os: [linux]
      compiler: {name: gcc, min: "13"}
      python: {min: "3.12", below: "3.13"}
    provides: []
    arch_dependencies: [flashmla, deepgemm, deepep, tilelang]
    reference_topology: {prefill_gpus: 4, decode_gpus: 64, single_scale_up_domain: true}
alternatives:
  - {name: vllm, platforms: [{vendor: nvidia, arch: sm90}]}
"""


def test_every_example_decodes(examples_dir: Path) -> None:
    for name in expected().decisions:
        manifest = decode_manifest((examples_dir / name).read_bytes(), fmt="yaml", source=name)
        struct = DeploymentManifest if name.startswith("dep-") else HardwareManifest
        assert isinstance(manifest, struct), name
        assert manifest.kind == struct.__name__


def test_examples_round_trip_through_canonical_json(examples_dir: Path) -> None:
    for name in expected().decisions:
        manifest = decode_manifest((examples_dir / name).read_bytes(), fmt="yaml")
        canonical = msgspec.json.encode(to_builtins(manifest))
        assert decode_manifest(canonical, fmt="json") == manifest, name


def test_the_policy_input_embeds_its_manifest_encoded_once(examples_dir: Path) -> None:
    """The plain path as the oracle: encoding the whole input again gives the same bytes."""
    for name in expected().decisions:
        manifest = to_builtins(decode_manifest((examples_dir / name).read_bytes(), fmt="yaml"))
        waivers = [{"rule": "port.production", "expires_at": "2099-01-01T00:00:00Z"}]
        built = build_input(
            manifest, evaluated_at=datetime(2026, 12, 5, tzinfo=UTC), waivers=waivers
        )
        assert built.canonical == msgspec.json.encode(built.document, order="sorted"), name
        assert built.manifest_digest == canonical_digest(
            msgspec.json.encode(manifest, order="sorted")
        ), name


def test_the_contract_matrix_decodes() -> None:
    matrix = decode_matrix(MATRIX.encode(), fmt="yaml")
    assert matrix.version == "2026.11.1"
    assert matrix.engines["deepinfer"].platforms[1].arch == "950"
    assert matrix.engines["deepinfer"].provides == ()
    assert matrix.default_engine is None
    assert [a.name for a in matrix.alternatives] == ["vllm"]


def test_a_matrix_published_before_section_10_keeps_its_form_and_meaning() -> None:
    """No catalogue, no tiers, alternatives without models, host or provides: the same
    canonical document (so the same digest) as when it was published, an empty catalogue,
    official platforms, and alternatives judged on nothing but their platforms."""
    document = yaml.safe_load(MATRIX)
    document["engines"]["deepinfer"].pop("provides")  # the canonical form omits empty lists
    old = decode_matrix(MATRIX.encode(), fmt="yaml")
    assert to_builtins(old) == document
    assert prepare(old).key == LoadedMatrix.from_document(document).key
    prepared = json.loads(prepare(old).prepared)
    assert prepared["accelerators"] == {}
    assert {
        toolkit["tier"]
        for toolkit in prepared["engines"]["deepinfer"]["platforms"]["nvidia"]["sm100"]
    } == {"official"}
    assert prepared["alternative_runtimes"]["vllm"]["models"] == {}
    assert prepared["alternative_runtimes"]["vllm"]["judges_service"] is False


def test_matrix_accelerator_patterns_the_policies_cannot_read_name_the_field() -> None:
    for pattern, message in (
        ("*[ -]H20", 'write "-" first'),
        ("{H20,H200}", "shell-style pattern"),
    ):
        text = (
            MATRIX + f'accelerators:\n  - {{vendor: nvidia, arch: sm90, models: ["{pattern}"]}}\n'
        )
        with pytest.raises(ManifestError) as caught:
            decode_matrix(text.encode(), fmt="yaml")
        assert caught.value.path.startswith("$.accelerators[0].models"), pattern
        assert message in str(caught.value), pattern


def test_canonical_form_omits_absent_fields_and_writes_utc() -> None:
    text = DEPLOYMENT.replace('"2026-11-20T10:00:00Z"', '"2026-11-20T12:30:00+02:30"')
    manifest = decode_manifest(text.encode(), fmt="yaml")
    canonical = to_builtins(manifest)
    assert canonical["kind"] == "DeploymentManifest"
    assert canonical["apiVersion"] == "supportgate/v1"
    assert canonical["metadata"] == {"name": "v41-flash-h100-trial"}
    assert canonical["spec"]["hardware"] == {"ref": "h100-pool-a"}
    assert canonical["spec"]["service"] == {
        "kv_cache": {"source": "external", "provider": "lmcache", "persistent": True}
    }
    assert canonical["spec"]["evidence"]["build"]["at"] == "2026-11-20T10:00:00Z"
    assert "null" not in json.dumps(canonical)


def test_matrix_canonical_form_omits_empty_lists() -> None:
    canonical = to_builtins(decode_matrix(MATRIX.encode(), fmt="yaml"))
    engine = canonical["engines"]["deepinfer"]
    assert "provides" not in engine
    assert engine["platforms"][0]["toolkit"] == {"name": "cuda", "min": "13.0", "below": "14"}
    assert isinstance(engine["models"], list)


def test_structs_built_in_python_store_utc() -> None:
    local = datetime.fromisoformat("2026-11-20T11:00:00+01:00")
    item = EvidenceItem(status="passed", at=local)
    assert item.at == datetime(2026, 11, 20, 10, tzinfo=UTC)
    assert item.at is not None
    assert item.at.tzinfo is UTC


def test_version_key_reads_missing_parts_as_zero() -> None:
    assert version_key("12.8") < version_key("13") == version_key("13.0") < version_key("13.0.1")
    assert version_key("560.35.03") == (560, 35, 3, 0)


def test_components_are_the_six_of_the_contract() -> None:
    assert get_args(Component) == (
        "kv_cache",
        "pd_orchestration",
        "load_balancing",
        "authentication",
        "http_transport",
        "api_compatibility",
    )


def _edit(text: str, old: str, new: str) -> bytes:
    assert old in text, old
    return text.replace(old, new, 1).encode()


BAD_HARDWARE = [
    ("unknown field", "nodes: 8", "nodes: 8\n  gpus: 64", "$.spec.gpus"),
    ("wrong type", "nodes: 8", "nodes: eight", "$.spec.nodes"),
    ("float for int", "nodes: 8", "nodes: 8.5", "$.spec.nodes"),
    ("bool for int", "per_node: 8", "per_node: true", "$.spec.accelerator.per_node"),
    ("zero nodes", "nodes: 8", "nodes: 0", "$.spec.nodes"),
    ("missing field", "  nodes: 8\n", "", "$.spec.nodes"),
    ("bad DNS name", "name: h100-pool-a", "name: H100_pool", "$.metadata.name"),
    ("DNS name too long", "name: h100-pool-a", f"name: {'a' * 64}", "$.metadata.name"),
    ("version 5 parts", '"12.8"', '"1.2.3.4.5"', "$.spec.toolkit.version"),
    ("version v1", '"12.8"', '"v1"', "$.spec.toolkit.version"),
    ("version newline", '"12.8"', '"12.8\\n"', "$.spec.toolkit.version"),
    ("bad NVIDIA arch", "arch: sm90", "arch: hopper", "$.spec.accelerator.arch"),
    ("numeric NVIDIA arch", "arch: sm90", "arch: 90", "$.spec.accelerator.arch"),
    ("upper-case vendor", "vendor: nvidia", "vendor: NVIDIA", "$.spec.accelerator.vendor"),
    ("memory not > 0", "memory_gib: 80", "memory_gib: 0", "$.spec.accelerator.memory_gib"),
    ("memory nan", "memory_gib: 80", "memory_gib: .nan", "$.spec.accelerator.memory_gib"),
    ("label not str", "labels: {site: fra1}", "labels: {site: [a]}", "$.metadata.labels.site"),
    ("unknown kind", "kind: HardwareManifest", "kind: GpuManifest", "$.kind"),
    ("missing kind", "kind: HardwareManifest\n", "", "$.kind"),
    ("wrong apiVersion", "supportgate/v1", "supportgate/v2", "$.apiVersion"),
    ("empty model", "model: H100-SXM5-80GB", 'model: ""', "$.spec.accelerator.model"),
]

BAD_DEPLOYMENT = [
    ("bad stage", "stage: experimental", "stage: staging", "$.spec.stage"),
    ("bad mode", "mode: offline", "mode: batch", "$.spec.mode"),
    ("bad source", "source: external", "source: vendor", "$.spec.service.kv_cache.source"),
    ("unknown component", "kv_cache:", "kv_store:", "$.spec.service.kv_store"),
    (
        "bad port status",
        "deepep: unported",
        "deepep: maybe",
        "$.spec.port.arch_dependencies.deepep",
    ),
    (
        "string for bool",
        "isolated_branch: true",
        'isolated_branch: "true"',
        "$.spec.port.isolated_branch",
    ),
    (
        "yes for bool",
        "isolated_branch: true",
        "isolated_branch: yes",
        "$.spec.port.isolated_branch",
    ),
    ("bad status", "status: passed", "status: ok", "$.spec.evidence.build.status"),
    ("bad RFC 3339 time", "2026-11-20T10:00:00Z", "2026-11-20 at ten", "$.spec.evidence.build.at"),
    ("date only", "2026-11-20T10:00:00Z", "2026-11-20", "$.spec.evidence.build.at"),
    ("naive datetime", "2026-11-20T10:00:00Z", "2026-11-20T10:00:00", "$.spec.evidence.build.at"),
    (
        "negative figure",
        "prefill_latency_ms: 0",
        "prefill_latency_ms: -1",
        "$.spec.evidence.performance.prefill_latency_ms",
    ),
    ("negative gpus", "decode_gpus: 4", "decode_gpus: -4", "$.spec.topology.decode_gpus"),
    ("no decode gpus", "decode_gpus: 4", "decode_gpus: 0", "$.spec.topology.decode_gpus"),
    (
        "no replicas",
        "decode_gpus: 4}",
        "decode_gpus: 4, replicas: 0}",
        "$.spec.topology.replicas",
    ),
    (
        "fractional replicas",
        "decode_gpus: 4}",
        "decode_gpus: 4, replicas: 1.5}",
        "$.spec.topology.replicas",
    ),
    (
        "both ref and spec",
        "hardware: {ref: h100-pool-a}",
        "hardware:\n    ref: h100-pool-a\n    spec:\n"
        + "".join(f"      {line}\n" for line in HARDWARE.split("spec:\n", 1)[1].splitlines()),
        "$.spec.hardware",
    ),
    ("neither ref nor spec", "hardware: {ref: h100-pool-a}", "hardware: {}", "$.spec.hardware"),
    ("bad ref", "hardware: {ref: h100-pool-a}", "hardware: {ref: H100}", "$.spec.hardware.ref"),
    (
        "bad inline spec",
        "hardware: {ref: h100-pool-a}",
        "hardware: {spec: {nodes: 1}}",
        "$.spec.hardware.spec.accelerator",
    ),
]

BAD_MATRIX = [
    ("bad matrix version", 'version: "2026.11.1"', 'version: "2026 11"', "$.version"),
    ("empty matrix version", 'version: "2026.11.1"', 'version: ""', "$.version"),
    (
        "negative age",
        "evidence_max_age_days: 90",
        "evidence_max_age_days: -1",
        "$.evidence_max_age_days",
    ),
    ("naive effective_from", "00:00:00Z", "00:00:00", "$.effective_from"),
    ("bad arch", "arch: sm100", "arch: b200", "$.engines.deepinfer.platforms[0].arch"),
    (
        "empty range",
        'below: "9.3"',
        'below: "9.1"',
        "$.engines.deepinfer.platforms[1].toolkit.below",
    ),
    ("bad min", 'min: "13.0"', 'min: "13.x"', "$.engines.deepinfer.platforms[0].toolkit.min"),
    ("unknown component", "provides: []", "provides: [kv]", "$.engines.deepinfer.provides[0]"),
    ("unknown host field", "os: [linux]", "oses: [linux]", "$.engines.deepinfer.host.oses"),
    (
        "default engine not listed",
        "evidence_max_age_days: 90",
        "evidence_max_age_days: 90\ndefault_engine: vllm",
        "$.default_engine",
    ),
    (
        "bad alternative arch",
        "arch: sm90}",
        "arch: ampere}",
        "$.alternatives[0].platforms[0].arch",
    ),
]


def _bad(text: str, cases: list[tuple[str, str, str, str]]) -> list[Any]:
    return [pytest.param(text, old, new, path, id=name) for name, old, new, path in cases]


@pytest.mark.parametrize(
    ("text", "old", "new", "path"), _bad(HARDWARE, BAD_HARDWARE) + _bad(DEPLOYMENT, BAD_DEPLOYMENT)
)
def test_bad_manifests_name_the_failing_path(text: str, old: str, new: str, path: str) -> None:
    with pytest.raises(ManifestError) as caught:
        decode_manifest(_edit(text, old, new), fmt="yaml", source="m.yaml")
    assert caught.value.path == path
    assert caught.value.source == "m.yaml"
    assert f"at `{path}`" in str(caught.value)


@pytest.mark.parametrize(("text", "old", "new", "path"), _bad(MATRIX, BAD_MATRIX))
def test_bad_matrices_name_the_failing_path(text: str, old: str, new: str, path: str) -> None:
    with pytest.raises(ManifestError) as caught:
        decode_matrix(_edit(text, old, new), fmt="yaml")
    assert caught.value.path == path


def test_the_same_errors_in_json_name_the_same_path() -> None:
    document = yaml.safe_load(HARDWARE)
    document["spec"]["accelerator"]["arch"] = "hopper"
    with pytest.raises(ManifestError) as caught:
        decode_manifest(json.dumps(document).encode(), fmt="json")
    assert caught.value.path == "$.spec.accelerator.arch"


def test_pattern_errors_say_what_is_expected() -> None:
    with pytest.raises(ManifestError) as caught:
        decode_manifest(_edit(HARDWARE, '"12.8"', '"v1"'), fmt="yaml")
    assert caught.value.message.startswith("expected a version: dotted numbers of 1 to 4 parts")
    assert "'v1'" in caught.value.message


def test_both_ref_and_spec_says_to_pick_one() -> None:
    case = next(c for c in BAD_DEPLOYMENT if c[0] == "both ref and spec")
    with pytest.raises(ManifestError, match="exactly one of `ref`"):
        decode_manifest(_edit(DEPLOYMENT, case[1], case[2]), fmt="yaml")


def test_inline_hardware_spec_decodes() -> None:
    inline = "".join(f"      {line}\n" for line in HARDWARE.split("spec:\n", 1)[1].splitlines())
    manifest = decode_manifest(
        _edit(DEPLOYMENT, "hardware: {ref: h100-pool-a}", f"hardware:\n    spec:\n{inline}"),
        fmt="yaml",
    )
    assert isinstance(manifest, DeploymentManifest)
    assert manifest.spec.hardware.spec is not None
    assert manifest.spec.hardware.spec.accelerator.arch == "sm90"


def _dump(document: dict[str, Any], fmt: Format) -> bytes:
    if fmt == "json":
        return json.dumps(document).encode()
    return yaml.safe_dump(document, allow_unicode=True, sort_keys=False).encode()


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=manifests())
def test_manifest_round_trip_is_identity(fmt: Format, document: dict[str, Any]) -> None:
    manifest = decode_manifest(_dump(document, fmt), fmt=fmt)
    canonical = to_builtins(manifest)
    assert canonical == document
    assert decode_manifest(msgspec.json.encode(canonical), fmt="json") == manifest
    assert decode_manifests(_dump(canonical, "yaml"), fmt="yaml") == [manifest]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=matrices())
def test_matrix_round_trip_is_identity(fmt: Format, document: dict[str, Any]) -> None:
    matrix = decode_matrix(_dump(document, fmt), fmt=fmt)
    assert isinstance(matrix, Matrix)
    canonical = to_builtins(matrix)
    assert canonical == document
    assert decode_matrix(msgspec.json.encode(canonical), fmt="json") == matrix


@pytest.mark.parametrize("bad", [0, 1, 499, 998, 999])
def test_errors_inside_dicts_name_the_key(bad: int) -> None:
    labels = ", ".join(f"k{i}: {'[x]' if i == bad else 'v'}" for i in range(1000))
    data = _edit(HARDWARE, "labels: {site: fra1}", f"labels: {{{labels}}}")
    with pytest.raises(ManifestError) as caught:
        decode_manifest(data, fmt="yaml")
    assert caught.value.path == f"$.metadata.labels.k{bad}"


def test_errors_inside_nested_dicts_name_every_key() -> None:
    second = MATRIX.replace(
        "engines:\n",
        "engines:\n  vllm:\n    models: []\n    platforms: []\n    host: {os: [linux]}\n",
    )
    data = _edit(second, "provides: []", "provides: [kv_cache, gpu]")
    with pytest.raises(ManifestError) as caught:
        decode_matrix(data, fmt="yaml")
    assert caught.value.path == "$.engines.deepinfer.provides[1]"


def test_a_failing_dict_key_is_named() -> None:
    second = MATRIX.replace(
        "engines:\n",
        'engines:\n  "":\n    models: []\n    platforms: []\n    host: {os: [linux]}\n',
    )
    with pytest.raises(ManifestError) as caught:
        decode_matrix(second.encode(), fmt="yaml")
    assert caught.value.path == "$.engines['']"
    assert "length >= 1" in caught.value.message
