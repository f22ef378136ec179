"""schemas/*.schema.json and the decoder accept exactly the same documents.

Each test draws a valid document (an example manifest, the contract's examples inline below,
or one of tests/strategies.py), changes it one to three times (drop a field, add an unknown one, put
a value of another type or a near-miss string somewhere, an integral or fractional float,
a number out of range, both or neither of `hardware.ref` and `hardware.spec`, an arch that
does not fit the vendor, ...) and asserts that JSON Schema validation (jsonschema, draft
2020-12, over the checked-in files and over the OpenAPI request-body schema) and the decoder
(`decode_manifest`, `decode_matrix`, JSON) both accept it or both refuse it.

A string holding an unpaired surrogate (JSON `"\ud800"`) is refused by the decoder alone, as
are a matrix's empty version range and unknown `default_engine` (see supportgate.manifests.
schema); those refusals are counted apart. The data model is JSON's: YAML-only rules
(duplicate keys, tags, aliases, a number read as text where a string is wanted) concern the
text, not the data, and are not drawn here.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from supportgate.errors import ManifestError
from supportgate.manifests import decode_manifest, decode_manifests, decode_matrix, to_builtins
from supportgate.manifests.schema import DEFAULT_DIR
from supportgate.openapi import ManifestBody
from tests import strategies

pytestmark = pytest.mark.fast

SCHEMA_DIR = Path(__file__).resolve().parents[2] / DEFAULT_DIR  # the repository's schemas/

Doc = dict[str, Any]
Path_ = tuple[str | int, ...]

CONTRACT_EXAMPLES: Final[tuple[Doc, ...]] = (  # the examples of docs/manifests.md, as JSON
    {
        "apiVersion": "supportgate/v1",
        "kind": "HardwareManifest",
        "metadata": {"name": "h100-pool-a", "owner": "infra"},
        "spec": {
            "accelerator": {
                "vendor": "nvidia",
                "model": "H100-SXM5-80GB",
                "arch": "sm90",
                "memory_gib": 80,
                "per_node": 8,
            },
            "nodes": 8,
            "interconnect": {"scale_up_domain": 8, "fabric": "nvlink"},
            "toolkit": {"name": "cuda", "version": "12.8"},
            "driver": "570.86.15",
            "os": {"name": "linux", "distribution": "ubuntu-24.04", "kernel": "6.8.0"},
            "compiler": {"name": "gcc", "version": "13.2.0"},
            "python": "3.12.7",
        },
    },
    {
        "apiVersion": "supportgate/v1",
        "kind": "DeploymentManifest",
        "metadata": {"name": "v41-flash-h100-trial", "owner": "ml-platform"},
        "spec": {
            "hardware": {"ref": "h100-pool-a"},
            "engine": {"name": "deepinfer", "version": "1.0.0", "commit": "3f2a9c1"},
            "model": {"name": "DeepSeek-V4.1-Flash", "quantization": "fp8"},
            "stage": "experimental",
            "mode": "offline",
            "topology": {"prefill_gpus": 4, "decode_gpus": 60},
            "service": {
                "kv_cache": {"source": "external", "provider": "lmcache", "persistent": True},
                "api_compatibility": {"source": "external", "provider": "deepseek-recipe"},
            },
            "port": {
                "production_stack_unchanged": True,
                "isolated_branch": True,
                "pinned": {"engine": "1.0.0", "toolkit": "12.8", "compiler": "gcc-13.2.0"},
                "arch_dependencies": {"flashmla": "ported", "deepep": "unported"},
            },
            "evidence": {
                "build": {"status": "passed", "at": "2026-11-20T10:00:00Z", "ref": "ci://b/812"},
                "numerical_parity": {"status": "passed", "reference_runtime": "vllm"},
                "performance": {"status": "absent", "prefill_latency_ms": 0, "concurrency": 0},
            },
        },
    },
)

# Values valid somewhere in a manifest, and near misses of each kind of field.
NEAR_MISSES: Final[tuple[Any, ...]] = (
    None, True, False, 0, 1, -1, 8, 8.0, 8.5, -0.0, 0.5, -0.5, 1e20, 2**64, "", " ",
    "x", "nvidia", "ascend", "NVIDIA", "sm90", "sm90a", "sm100", "SM90", "sm", "sm9_0", "910b",
    "950", "gfx942", "sm90\n", "12.8", "9.20", "12", "1.2.3.4", "1.2.3.4.5", "1..2", "v1",
    "-a", "a-", "A", "a" * 63, "a" * 64, "a\x00b", "\ud800", "\ud83d\ude00", "ok\u00e9",
    "supportgate/v1", "HardwareManifest", "DeploymentManifest", "production", "online",
    "external", "missing", "passed", "ported", "2026-11-20T10:00:00Z", "2026-11-20t10:00:00z",
    "2026-11-20 10:00:00+0100", "2026-11-20T10:00:00", "2026-02-29T00:00:00Z",
    "2024-02-29T00:00:00Z", "2026-11-31T00:00:00Z", "2026-11-20T24:00:00Z",
    "0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00Z", "9999-12-31T23:00:00-01:00",
    "2026-11-20T10:00:00.123456789+05:30", "\u0662\u0660\u0662\u0666-11-20T10:00:00Z",
    [], [1], ["linux"], {}, {"name": "x"}, {"ref": "h100-pool-a"}, {"spec": {}},
)  # fmt: skip
UNKNOWN_KEYS: Final = st.sampled_from(("extra", "Name", "nodes ", "a\x00", "\udc00", "kind"))


def _paths(node: Any, here: Path_ = ()) -> list[Path_]:
    """Every path into `node` (the root excluded), parents before children."""
    found: list[Path_] = []
    children = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, value in children:
        found.append((*here, key))
        found.extend(_paths(value, (*here, key)))
    return found


def _parent(doc: Doc, path: Path_) -> Any:
    node: Any = doc
    for step in path[:-1]:
        node = node[step]
    return node


@st.composite
def _mutate(draw: st.DrawFn, doc: Doc) -> Doc:
    """`doc` changed once, at a drawn place, in a drawn way."""
    doc = copy.deepcopy(doc)
    path = draw(st.sampled_from(_paths(doc)))
    parent, last = _parent(doc, path), path[-1]
    value = parent[last]
    how = draw(st.sampled_from(("drop", "add", "replace", "float", "number", "text", "binding")))
    event(how)
    if how == "drop" and isinstance(parent, dict):
        del parent[last]
    elif how == "add" and isinstance(value, dict):
        value[draw(UNKNOWN_KEYS)] = draw(st.sampled_from(NEAR_MISSES))
    elif how == "float" and isinstance(value, int) and not isinstance(value, bool):
        parent[last] = float(value)
    elif how == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        parent[last] = draw(st.integers(-3, 3) | st.floats(-3, 1e30, allow_nan=False))
    elif how == "text" and isinstance(value, str):
        parent[last] = draw(st.sampled_from((value + "x", value.upper(), value[:-1], "")))
    elif how == "binding" and isinstance(value, dict) and "hardware" in value:
        both = {"ref": "h100-pool-a", "spec": copy.deepcopy(CONTRACT_EXAMPLES[0]["spec"])}
        value["hardware"] = draw(
            st.sampled_from(({}, both, {"ref": None}, {"ref": None, "spec": both["spec"]}))
        )
    else:
        parent[last] = copy.deepcopy(draw(st.sampled_from(NEAR_MISSES)))
    return doc


@st.composite
def mutants(draw: st.DrawFn, seeds: st.SearchStrategy[Doc]) -> Doc:
    doc = draw(seeds)
    for _ in range(draw(st.integers(1, 3))):
        doc = draw(_mutate(doc))
    return doc


def _validator(*names: str) -> Draft202012Validator:
    """One of the checked-in schemas `names` (by file name), as one validator."""
    resources = [
        (path.name, Resource.from_contents(json.loads(path.read_text("utf-8"))))
        for path in map(SCHEMA_DIR.joinpath, names)
    ]
    union = {"oneOf": [{"$ref": name} for name in names]}
    return Draft202012Validator(union, registry=Registry().with_resources(resources))


FORMAT_CHECKER: Final = Draft202012Validator.FORMAT_CHECKER
MANIFEST_FILES = _validator("hardware.schema.json", "deployment.schema.json")
MANIFEST_BODY = Draft202012Validator(
    ManifestBody().body().content["application/json"].schema.to_schema()  # type: ignore[union-attr]
)
MATRIX_FILE = _validator("matrix.schema.json")

SURROGATES: Final = "unpaired UTF-16 surrogates"
MATRIX_CROSS_FIELD: Final = ("the range is empty", "is not among `engines`")
"""What the decoder alone checks, which the schemas cannot say (supportgate.manifests.schema):
unpaired surrogates anywhere, and the two matrix checks that compare fields."""


def _decoder_error(decode: Callable[..., object], doc: Doc) -> ManifestError | None:
    try:
        decode(json.dumps(doc).encode(), fmt="json")
    except ManifestError as exc:
        return exc
    return None


def _assert_agree(doc: Doc, validator: Draft202012Validator, decode: Callable[..., object]) -> bool:
    """Both accept (True) or both refuse (False); a refusal for a documented reason passes."""
    refused = _decoder_error(decode, doc)
    if refused is not None and refused.message.startswith(SURROGATES):
        event("refused: unpaired surrogate (the documented exception)")
        return False
    errors = [error.message for error in itertools.islice(validator.iter_errors(doc), 3)]
    assert (refused is None) == (not errors), (
        f"decoder: {refused or 'accepts'}; schema: {errors or 'accepts'}\n{json.dumps(doc)}"
    )
    return refused is None


SETTINGS: Final = settings(
    max_examples=1000,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def manifest_seeds(examples_dir: Path) -> st.SearchStrategy[Doc]:
    """The example manifests, the contract's, and any tests/strategies.py draws."""
    examples = [
        to_builtins(manifest)
        for path in sorted(examples_dir.glob("*.yaml"))
        for manifest in decode_manifests(path.read_bytes(), fmt="yaml")
    ]
    assert examples, f"no example manifests in {examples_dir}"
    return st.sampled_from([*examples, *CONTRACT_EXAMPLES]) | strategies.manifests()


@SETTINGS
@given(data=st.data())
def test_schemas_and_decoder_agree_on_mutated_manifests(
    manifest_seeds: st.SearchStrategy[Doc], data: st.DataObject
) -> None:
    doc = data.draw(mutants(manifest_seeds), label="mutant")
    event("accepted" if _assert_agree(doc, MANIFEST_FILES, decode_manifest) else "refused")
    assert MANIFEST_BODY.is_valid(doc) == MANIFEST_FILES.is_valid(doc), "the OpenAPI body"


@settings(SETTINGS, max_examples=300)  # a matrix is larger to draw; its fields are fewer
@given(doc=mutants(strategies.matrices()))
def test_schema_and_decoder_agree_on_mutated_matrices(doc: Doc) -> None:
    refused = _decoder_error(decode_matrix, doc)
    if refused is not None and any(part in refused.message for part in MATRIX_CROSS_FIELD):
        event("refused: fields compared (the documented exception)")
        return
    event("accepted" if _assert_agree(doc, MATRIX_FILE, decode_matrix) else "refused")


@pytest.mark.parametrize("doc", CONTRACT_EXAMPLES, ids=["hardware", "deployment"])
def test_the_seeds_are_valid(doc: Doc) -> None:
    assert _assert_agree(doc, MANIFEST_FILES, decode_manifest)


@pytest.mark.parametrize(
    ("change", "accepted"),
    [
        (lambda d: d["spec"].update(nodes=8.0), True),  # an integral float is an integer
        (lambda d: d["spec"].update(nodes=8.5), False),
        (lambda d: d["spec"]["accelerator"].update(arch="910b"), False),  # not for nvidia
        (lambda d: d["spec"]["accelerator"].update(vendor="ascend", arch="910b"), True),
        (lambda d: d["spec"]["accelerator"].update(arch="sm90\n"), False),
        (lambda d: d["metadata"].update(owner="a\x00b"), False),
        (lambda d: d["metadata"].update(labels={"a\x00": "x"}), False),
        (lambda d: d["metadata"].update(owner="\ud83d\ude00"), True),  # a pair is fine
    ],
)
def test_agreement_on_named_cases(change: Callable[[Doc], None], accepted: bool) -> None:
    doc = copy.deepcopy(CONTRACT_EXAMPLES[0])
    change(doc)
    assert _assert_agree(doc, MANIFEST_FILES, decode_manifest) is accepted


@pytest.mark.parametrize(
    ("hardware", "accepted"),
    [
        ({"ref": "h100-pool-a"}, True),
        ({"spec": CONTRACT_EXAMPLES[0]["spec"]}, True),
        ({"ref": None, "spec": CONTRACT_EXAMPLES[0]["spec"]}, True),
        ({"ref": "h100-pool-a", "spec": CONTRACT_EXAMPLES[0]["spec"]}, False),
        ({}, False),
        ({"ref": None}, False),
    ],
)
def test_exactly_one_of_ref_and_spec(hardware: Doc, accepted: bool) -> None:
    doc = copy.deepcopy(CONTRACT_EXAMPLES[1])
    doc["spec"]["hardware"] = hardware
    assert _assert_agree(doc, MANIFEST_FILES, decode_manifest) is accepted


@pytest.mark.parametrize("name", ["hardware", "deployment", "matrix", "decision"])
def test_the_schemas_are_valid_for_python_and_rust_validators(name: str) -> None:
    """Every pattern compiles in Python's `re` and in Rust's regex dialect (jsonschema-rs,
    which schemathesis uses): a pattern either cannot read is not enforced, or not valid."""
    document = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text("utf-8"))
    Draft202012Validator.check_schema(document, format_checker=FORMAT_CHECKER)
    jsonschema_rs.meta.validate(document)
    jsonschema_rs.validator_for(document, validate_formats=True)


def test_a_disagreement_is_found(tmp_path: Path) -> None:
    """The property fails when the schema forgets a rule: here the NVIDIA arch."""
    texts = {p.name: p.read_text("utf-8") for p in SCHEMA_DIR.glob("*.schema.json")}
    forgetful = json.loads(texts["hardware.schema.json"])
    for key in ("if", "then"):
        del forgetful["$defs"]["Accelerator"][key]
    resource = Resource.from_contents(forgetful)
    validator = Draft202012Validator(
        {"$ref": "hardware.schema.json"},
        registry=Registry().with_resources([("hardware.schema.json", resource)]),
    )

    @SETTINGS  # the NVIDIA pool as the only seed, so that its arch is often what changes
    @given(doc=mutants(st.just(CONTRACT_EXAMPLES[0])))
    def agree(doc: Doc) -> None:
        _assert_agree(doc, validator, decode_manifest)

    with pytest.raises(AssertionError, match="an NVIDIA arch"):
        agree()
