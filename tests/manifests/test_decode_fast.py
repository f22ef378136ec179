"""The fast JSON path of decode_manifest agrees with the careful path, and steps aside
whenever a rule needs the careful path to decide or to name the field."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings

from supportgate.errors import ManifestError
from supportgate.manifests import decode, decode_manifest, to_builtins
from supportgate.manifests._convert import convert
from supportgate.manifests._raw import parse_json
from tests import strategies

pytestmark = pytest.mark.fast


def careful(data: bytes) -> Any:
    return convert(parse_json(data.decode()), decode.Manifest, numbers_as_text=False)


@settings(max_examples=300, deadline=None)
@given(document=strategies.manifests())
def test_fast_and_careful_paths_agree(document: dict[str, Any]) -> None:
    data = msgspec.json.encode(document)
    fast = decode._clean_json_manifest(data)
    assert fast is not None
    assert fast == careful(data)
    assert to_builtins(fast) == document


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (b'{"apiVersion":"supportgate/v1","apiVersion":"supportgate/v1"}', "$.apiVersion"),
        (b'{"kind":"HardwareManifest","metadata":{"name":"a\\u0000b"}}', "$.metadata.name"),
        (b'{"kind":"HardwareManifest","metadata":{"name":"\\ud800"}}', "$.metadata.name"),
    ],
)
def test_rules_msgspec_would_miss_go_the_careful_way(body: bytes, path: str) -> None:
    assert decode._clean_json_manifest(body) is None
    with pytest.raises(ManifestError) as raised:
        decode_manifest(body, fmt="json")
    assert raised.value.path == path


def test_duplicate_keys_deep_inside_are_refused(examples_dir: Any) -> None:
    document = to_builtins(
        decode_manifest((examples_dir / "hw-b200-pool.yaml").read_bytes(), fmt="yaml")
    )
    data = msgspec.json.encode(document).replace(b'"nodes":9', b'"nodes":9,"nodes":10')
    assert decode._clean_json_manifest(data) is None
    same_value_twice = msgspec.json.encode(document).replace(b'"nodes":9', b'"nodes":9,"nodes":9')
    assert decode._clean_json_manifest(same_value_twice) is None
    with pytest.raises(ManifestError, match="duplicate key"):
        decode_manifest(data, fmt="json")


@pytest.mark.parametrize(
    ("find", "spelling", "fast_path"),
    [
        (b'"nodes":9', b'"nodes" :  9 ', True),  # whitespace: compacted on both sides
        (b'"owner":"', b'"owner":"ml\\/', False),  # an escaped slash decodes to "/": careful way
    ],
)
def test_other_spellings_decide_the_same(
    examples_dir: Any, find: bytes, spelling: bytes, fast_path: bool
) -> None:
    document = to_builtins(
        decode_manifest((examples_dir / "hw-b200-pool.yaml").read_bytes(), fmt="yaml")
    )
    data = msgspec.json.encode(document).replace(find, spelling, 1)
    assert data != msgspec.json.encode(document)
    assert (decode._clean_json_manifest(data) is not None) == fast_path
    assert decode_manifest(data, fmt="json") == careful(data)
