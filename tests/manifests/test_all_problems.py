"""A manifest with several problems gets all of them (CONTRACT 10.8), each with its JSON path
and, where the text shows it, its line and column; syntax errors carry the parser's place."""

from __future__ import annotations

import json

import pytest

from supportgate.errors import ManifestError
from supportgate.manifests import decode_manifest, decode_manifests

pytestmark = pytest.mark.fast

BROKEN = b"""\
apiVersion: supportgate/v1
kind: HardwareManifest
metadata: {name: Bad_Name, owner: infra}
spec:
  accelerator: {vendor: nvidia, model: H100, arch: sm90, per_node: 0}
  nodes: -1
  toolkit: {name: cuda, version: "12.x"}
  colour: blue
"""


def problems(data: bytes, fmt: str = "yaml") -> list[tuple[str, int | None, int | None]]:
    with pytest.raises(ManifestError) as caught:
        decode_manifests(data, fmt=fmt, source="m.yaml")  # type: ignore[arg-type]
    return [(p.field, p.line, p.column) for p in caught.value.problems]


def test_every_problem_is_reported_with_its_line_and_column() -> None:
    assert problems(BROKEN) == [
        ("$.metadata.name", 3, 12),
        ("$.spec.accelerator.per_node", 5, 58),
        ("$.spec.nodes", 6, 3),
        ("$.spec.toolkit.version", 7, 25),
        ("$.spec.colour", 8, 3),
    ]


def test_the_first_problem_is_the_errors_own() -> None:
    with pytest.raises(ManifestError) as caught:
        decode_manifest(BROKEN, fmt="yaml", source="m.yaml")
    error = caught.value
    assert (error.field, error.source) == ("$.metadata.name", "m.yaml")
    assert all(p.source == "m.yaml" for p in error.problems)


def test_a_missing_field_and_a_duplicate_key_are_reported_beside_the_rest() -> None:
    text = BROKEN.replace(b"  nodes: -1\n", b"  toolkit: {}\n")
    found = problems(text)
    assert ("$.spec.toolkit", 7, 3) in found  # the duplicate
    assert ("$.spec.nodes", 4, 1) in found  # missing: at the mapping that lacks it
    assert ("$.metadata.name", 3, 12) in found


def test_every_document_of_a_stream_is_judged() -> None:
    with pytest.raises(ManifestError) as caught:
        decode_manifests(BROKEN + b"---\n" + BROKEN, fmt="yaml", source="m.yaml")
    sources = {p.source for p in caught.value.problems}
    assert sources == {"m.yaml, document 1", "m.yaml, document 2"}
    assert len(caught.value.problems) == 10
    assert caught.value.problems[5].line == 12  # the second document's name, in the file


def test_at_most_fifty() -> None:
    doc = json.loads(json.dumps(_valid()))
    doc["metadata"]["labels"] = {f"l{n}": n for n in range(60)}  # JSON: numbers are not text
    assert len(problems(json.dumps(doc).encode(), "json")) == 50


@pytest.mark.parametrize(
    ("text", "fmt", "line", "column"),
    [
        (
            b"apiVersion: supportgate/v1\nkind: HardwareManifest\nmetadata: {name: x\nspec: {}\n",
            "yaml",
            4,
            5,
        ),
        (b'{"apiVersion": "supportgate/v1",\n "kind": }', "json", 2, 10),
        (b"apiVersion: supportgate/v1\nkind: !custom HardwareManifest\n", "yaml", 2, 7),
    ],
)
def test_a_syntax_error_has_the_parsers_line(text: bytes, fmt: str, line: int, column: int) -> None:
    [(_, got_line, got_column)] = problems(text, fmt)
    assert (got_line, got_column) == (line, column)


def _valid() -> dict[str, object]:
    return {
        "apiVersion": "supportgate/v1",
        "kind": "HardwareManifest",
        "metadata": {"name": "pool"},
        "spec": {
            "accelerator": {"vendor": "nvidia", "model": "H100", "arch": "sm90", "per_node": 8},
            "nodes": 1,
            "toolkit": {"name": "cuda", "version": "12.8"},
        },
    }


def test_every_manifest_of_a_list_is_walked() -> None:
    first, second = _valid(), _valid()
    first["spec"]["nodes"] = 0  # type: ignore[index]
    second["metadata"] = {"name": "Second", "labels": {"team": 5}}
    found = problems(json.dumps([first, second], indent=1).encode(), "json")
    assert {field for field, _, _ in found} == {
        "$[0].spec.nodes",
        "$[1].metadata.name",
        "$[1].metadata.labels.team",
    }
    assert all(line is not None for _, line, _ in found)
