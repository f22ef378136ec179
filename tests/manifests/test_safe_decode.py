"""Safe decoding: YAML without tags, aliases or duplicates; numbers kept as written; limits."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from supportgate.errors import DocumentTooLargeError, ManifestError
from supportgate.manifests import (
    MAX_BYTES,
    DeploymentManifest,
    Format,
    HardwareManifest,
    Manifest,
    decode_manifest,
    decode_manifests,
    decode_matrix,
    format_of,
    to_builtins,
)
from supportgate.manifests._yaml import parse_yaml

pytestmark = pytest.mark.fast

HARDWARE = """\
apiVersion: supportgate/v1
kind: HardwareManifest
metadata: {name: pool, owner: infra}
spec:
  accelerator: {vendor: ascend, model: Ascend 950, arch: "950", per_node: 16}
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
"""


def _hardware(old: str = "", new: str = "") -> bytes:
    assert old in HARDWARE
    return HARDWARE.replace(old, new, 1).encode()


def _hw(data: bytes) -> HardwareManifest:
    manifest = decode_manifest(data, fmt="yaml")
    assert isinstance(manifest, HardwareManifest)
    return manifest


def _refused(data: bytes, fmt: Format = "yaml") -> ManifestError:
    with pytest.raises(ManifestError) as caught:
        decode_manifest(data, fmt=fmt)
    return caught.value


# -- YAML: tags, anchors and aliases, keys --------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ("owner: infra", "owner: !!str infra", "$.metadata.owner"),
        ("owner: infra", "owner: !custom infra", "$.metadata.owner"),
        ("owner: infra", "owner: ! infra", "$.metadata.owner"),
        ("nodes: 4", "nodes: !!int 4", "$.spec.nodes"),
        ("metadata: {", "metadata: !!map {", "$.metadata"),
        ("kind: HardwareManifest", "kind: !!python/name:os.system HardwareManifest", "$.kind"),
    ],
)
def test_tags_are_refused(old: str, new: str, path: str) -> None:
    error = _refused(_hardware(old, new))
    assert "tags are not accepted" in error.message
    assert error.path == path


def test_a_tag_on_the_document_is_refused() -> None:
    error = _refused(b"!!map\n" + HARDWARE.encode())
    assert "tags are not accepted" in error.message
    assert error.path == "$"


@pytest.mark.parametrize(
    ("text", "message", "path"),
    [
        (
            HARDWARE.replace("metadata: {", "metadata: &meta {"),
            "anchors are not accepted (&meta)",
            "$.metadata",
        ),
        (HARDWARE + "extra: *meta\n", "aliases are not accepted (*meta)", "$.extra"),
        (
            HARDWARE.replace("toolkit: {", "toolkit: {<<: *base, "),
            "aliases are not accepted (*base)",
            "$.spec.toolkit['<<']",
        ),
        (
            "base: &base {name: cann}\n" + HARDWARE,
            "anchors are not accepted (&base)",
            "$.base",
        ),
    ],
)
def test_anchors_and_aliases_are_refused(text: str, message: str, path: str) -> None:
    error = _refused(text.encode())
    assert message in error.message
    assert error.path == path


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ("nodes: 4", "nodes: 4\n  nodes: 5", "$.spec.nodes"),
        ('arch: "950"', 'arch: "950", arch: "910b"', "$.spec.accelerator.arch"),
        ("kind: HardwareManifest", "kind: HardwareManifest\nkind: HardwareManifest", "$.kind"),
        ("owner: infra", 'owner: infra, "owner": x', "$.metadata.owner"),
    ],
)
def test_duplicate_keys_are_refused_naming_the_key(old: str, new: str, path: str) -> None:
    error = _refused(_hardware(old, new))
    assert error.message.startswith(f"duplicate key `{path.rsplit('.', 1)[1]}`")
    assert "line" in error.message
    assert error.path == path


def test_duplicate_keys_are_refused_in_json() -> None:
    document = json.dumps(yaml.safe_load(HARDWARE))
    data = document.replace('"nodes": 4', '"nodes": 4, "nodes": 5').encode()
    error = _refused(data, "json")
    assert error.path == "$.spec.nodes"
    assert "duplicate key" in error.message


def test_collection_keys_are_refused() -> None:
    error = _refused(_hardware("nodes: 4", "nodes: 4\n  ? [a, b]\n  : c"))
    assert "keys must be scalars" in error.message
    assert error.path == "$.spec"


def test_keys_are_read_as_written() -> None:
    manifest = _hw(_hardware("owner: infra", "labels: {1: a, true: b, null: c, 0x1F: d}"))
    assert manifest.metadata.labels == {"1": "a", "true": "b", "null": "c", "0x1F": "d"}


# -- YAML 1.2 scalars -----------------------------------------------------------------------


@pytest.mark.parametrize("word", ["no", "yes", "on", "off", "y", "n", "No", "YES"])
def test_yaml_1_1_booleans_stay_strings(word: str) -> None:
    assert _hw(_hardware("owner: infra", f"owner: {word}")).metadata.owner == word


@pytest.mark.parametrize(("word", "value"), [("true", True), ("True", True), ("FALSE", False)])
def test_true_and_false_are_booleans(word: str, value: bool) -> None:
    manifest = decode_manifest(
        DEPLOYMENT.replace("topology:", f"port: {{isolated_branch: {word}}}\n  topology:").encode(),
        fmt="yaml",
    )
    assert isinstance(manifest, DeploymentManifest)
    assert manifest.spec.port is not None
    assert manifest.spec.port.isolated_branch is value


@pytest.mark.parametrize(
    ("old", "new", "text"),
    [
        ('python: "3.12.9"', "python: 3.10", "3.10"),
        ('version: "9.2"', "version: 9.20", "9.20"),
        ('version: "9.2"', "version: 9", "9"),
        ('arch: "950"', "arch: 950", "950"),
        ('arch: "950"', "arch: 0950", "0950"),
        ("owner: infra", "owner: 0x1F", "0x1F"),
        ("owner: infra", "owner: 1e3", "1e3"),
        ("owner: infra", "owner: -0.50", "-0.50"),
    ],
)
def test_unquoted_numbers_in_string_places_keep_their_text(old: str, new: str, text: str) -> None:
    manifest = _hw(_hardware(old, new))
    field = new.split(":", 1)[0]
    read = {
        "python": manifest.spec.python,
        "version": manifest.spec.toolkit.version,
        "arch": manifest.spec.accelerator.arch,
        "owner": manifest.metadata.owner,
    }
    assert read[field] == text


def test_an_all_digit_commit_stays_text() -> None:
    text = DEPLOYMENT.replace('version: "1.0.0"}', 'version: "1.0.0", commit: 0012345}')
    manifest = decode_manifest(text.encode(), fmt="yaml")
    assert isinstance(manifest, DeploymentManifest)
    assert manifest.spec.engine.commit == "0012345"


@given(version=st.from_regex(r"\A[0-9]{1,3}(\.[0-9]{1,3}){0,3}\Z"))
def test_any_unquoted_version_is_read_exactly_as_written(version: str) -> None:
    assert _hw(_hardware('python: "3.12.9"', f"python: {version}")).spec.python == version


def test_an_unquoted_number_that_is_no_version_is_refused_as_one() -> None:
    error = _refused(_hardware('python: "3.12.9"', "python: 1e3"))
    assert error.path == "$.spec.python"
    assert "'1e3'" in error.message


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ("nodes: 4", 'nodes: "4"', "$.spec.nodes"),
        ("nodes: 4", "nodes: 4.5", "$.spec.nodes"),
        ("nodes: 4", "nodes: .inf", "$.spec.nodes"),
        ("nodes: 4", "nodes: 1e999", "$.spec.nodes"),
        ("per_node: 16", "per_node: true", "$.spec.accelerator.per_node"),
    ],
)
def test_numbers_stay_strict_in_number_places(old: str, new: str, path: str) -> None:
    assert _refused(_hardware(old, new)).path == path


@pytest.mark.parametrize("written", ["4.0", "4.", "0.4e1", "4e0"])
def test_an_integral_float_is_the_integer_in_integer_places(written: str) -> None:
    """As JSON Schema's `integer` has it (schemas/ and the decoder agree)."""
    decoded = _hw(_hardware("nodes: 4", f"nodes: {written}"))
    assert decoded.spec.nodes == 4
    assert type(decoded.spec.nodes) is int
    assert to_builtins(decoded)["spec"]["nodes"] == 4


def test_an_integral_float_in_json_is_the_integer() -> None:
    manifest = decode_manifest(_json('"nodes": 4', '"nodes": 4.0'), fmt="json")
    assert isinstance(manifest, HardwareManifest)
    assert manifest.spec.nodes == 4


def test_null_reads_as_absent() -> None:
    assert _hw(_hardware("owner: infra", "owner: ~")).metadata.owner is None


# -- JSON -----------------------------------------------------------------------------------


HARDWARE_JSON = json.dumps(yaml.safe_load(HARDWARE))


def _json(old: str = "", new: str = "") -> bytes:
    assert old in HARDWARE_JSON
    return HARDWARE_JSON.replace(old, new, 1).encode()


def test_json_decodes() -> None:
    assert decode_manifest(_json(), fmt="json") == _hw(HARDWARE.encode())


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ('"python": "3.12.9"', '"python": 3.10', "$.spec.python"),
        ('"version": "9.2"', '"version": 9.20', "$.spec.toolkit.version"),
        ('"arch": "950"', '"arch": 950', "$.spec.accelerator.arch"),
    ],
)
def test_json_numbers_in_string_places_are_refused_with_a_hint(
    old: str, new: str, path: str
) -> None:
    error = _refused(_json(old, new), "json")
    assert error.path == path
    number = new.split(": ", 1)[1]
    assert f'quote it ("{number}")' in error.message


@pytest.mark.parametrize("text", ['{"nodes": NaN}', '{"nodes": Infinity}', "{", '{"a": 1,}'])
def test_invalid_json_is_a_manifest_error(text: str) -> None:
    assert _refused(text.encode(), "json").path == "$"


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ('"nodes": 4', '"nodes": "4"', "$.spec.nodes"),
        ('"nodes": 4', '"nodes": true', "$.spec.nodes"),
        ('"nodes": 4', '"nodes": 4.5', "$.spec.nodes"),
    ],
)
def test_json_numbers_stay_strict(old: str, new: str, path: str) -> None:
    assert _refused(_json(old, new), "json").path == path


# -- limits and encodings -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "data"),
    [
        ("json", b"[" * 100_000),
        ("json", b'{"a": ' * 100_000),
        ("json", b"[" * 100_000 + b"]" * 100_000),
        ("yaml", b"[" * 100_000),
        ("yaml", b"a: " + b"{a: " * 100_000),
        ("yaml", b"- " * 100_000 + b"x"),
    ],
    ids=["json-arrays", "json-objects", "json-closed", "yaml-flow", "yaml-maps", "yaml-block"],
)
def test_deep_nesting_is_refused_cleanly(fmt: Format, data: bytes) -> None:
    error = _refused(data, fmt)  # a ManifestError, never RecursionError
    assert "nest" in error.message
    assert error.path.startswith("$")


def test_deep_block_nesting_is_refused_cleanly() -> None:
    text = "".join("  " * depth + "a:\n" for depth in range(200))
    error = _refused(text.encode())
    assert f"deeper than {64} levels" in error.message
    assert error.path.startswith("$.a.a.a")


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_nesting_at_the_limit_is_parsed(fmt: Format) -> None:
    data = ("[" * 64 + "]" * 64).encode()
    error = _refused(data, fmt)  # parsed, then refused as the wrong shape
    assert "nest" not in error.message


def test_oversize_documents_are_refused() -> None:
    data = HARDWARE.encode() + b"#" * (MAX_BYTES - len(HARDWARE))
    with pytest.raises(DocumentTooLargeError) as caught:
        decode_manifest(data + b"#", fmt="yaml", source="big.yaml")
    assert "1 MiB" in caught.value.message
    assert caught.value.source == "big.yaml"
    assert isinstance(caught.value, ManifestError)
    assert _hw(data).metadata.name == "pool"  # exactly the limit is fine


@pytest.mark.parametrize(
    ("fmt", "data"),
    [
        ("yaml", HARDWARE.replace("infra", "caf\u00e9").encode("latin-1")),
        ("json", b'{"a": "caf\xe9"}'),
        ("yaml", b"\xff\xfe" + HARDWARE.encode("utf-16-le")),
    ],
)
def test_non_utf8_is_refused(fmt: Format, data: bytes) -> None:
    assert "not UTF-8" in _refused(data, fmt).message


def test_a_byte_order_mark_is_ignored() -> None:
    assert _hw(b"\xef\xbb\xbf" + HARDWARE.encode()).metadata.name == "pool"


@pytest.mark.parametrize("text", ["a: [1, 2", "a: b\n\tc: d", "a: 'x", "a: \x00"])
def test_invalid_yaml_is_a_manifest_error(text: str) -> None:
    assert "not valid YAML" in _refused(text.encode()).message


# -- documents ------------------------------------------------------------------------------


def test_a_yaml_stream_holds_several_manifests() -> None:
    data = f"---\n{HARDWARE}---\n{DEPLOYMENT}---\n".encode()
    found: list[Manifest] = decode_manifests(data, fmt="yaml")
    assert [type(m) for m in found] == [HardwareManifest, DeploymentManifest]


def test_an_error_in_a_later_document_names_the_document() -> None:
    data = f"{HARDWARE}---\n{DEPLOYMENT.replace('stage: evaluation', 'stage: x')}".encode()
    with pytest.raises(ManifestError) as caught:
        decode_manifests(data, fmt="yaml", source="all.yaml")
    assert caught.value.source == "all.yaml, document 2"
    assert caught.value.path == "$.spec.stage"


def test_decode_manifest_wants_exactly_one_document() -> None:
    with pytest.raises(ManifestError, match="found 2 documents"):
        decode_manifest(f"{HARDWARE}---\n{DEPLOYMENT}".encode(), fmt="yaml")
    with pytest.raises(ManifestError, match="found 0 documents"):
        decode_manifest(b"# nothing here\n", fmt="yaml")
    assert decode_manifests(b"# nothing here\n", fmt="yaml") == []


def test_a_json_array_holds_several_manifests() -> None:
    hardware, deployment = yaml.safe_load(HARDWARE), yaml.safe_load(DEPLOYMENT)
    found = decode_manifests(json.dumps([hardware, deployment]).encode(), fmt="json")
    assert [type(m) for m in found] == [HardwareManifest, DeploymentManifest]
    assert decode_manifests(json.dumps(hardware).encode(), fmt="json") == found[:1]
    deployment["spec"]["mode"] = "batch"
    with pytest.raises(ManifestError) as caught:
        decode_manifests(json.dumps([hardware, deployment]).encode(), fmt="json")
    assert caught.value.path == "$[1].spec.mode"


def test_a_matrix_is_one_object() -> None:
    with pytest.raises(ManifestError) as caught:
        decode_matrix(b"[]", fmt="json")
    assert caught.value.path == "$"


def test_format_of_file_names() -> None:
    assert format_of("a.JSON") == "json"
    assert format_of("a.yaml") == format_of("a.yml") == format_of("-") == "yaml"


# -- both YAML parsers agree ----------------------------------------------------------------

CORPUS = [
    HARDWARE,
    DEPLOYMENT,
    f"---\n{HARDWARE}---\n{DEPLOYMENT}...\n",
    "a: [1, 0o17, 0x1F, -2.50, .5, 1e3, .inf, ~, null, '', true, no, 2026-11-20T10:00:00Z]\n",
    "a: |\n  block\n  text\nb: >\n  folded\n  text\nc: 'single ''q'''\nd: \"\\u00e9\\n\"\n",
    "- a\n- - b\n  - c\n- {d: [e, {f: g}]}\n",
    "? a\n: 1\n'b': 2\n\"c\": 3\n",
]


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML built without libyaml")
@pytest.mark.parametrize("text", CORPUS)
def test_libyaml_and_pure_python_parsers_agree(text: str) -> None:
    assert parse_yaml(text, loader=yaml.CSafeLoader) == parse_yaml(text, loader=yaml.SafeLoader)
