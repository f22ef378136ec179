"""Safe decoding of manifests and matrices from YAML or JSON, every failure naming its field's
JSON path; MAX_BYTES and MAX_DEPTH are checked before anything recursive runs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final, Literal, TypeVar, cast

import msgspec

from supportgate.errors import (
    DocumentTooLargeError,
    FieldProblem,
    ManifestError,
    UnsupportedMediaType,
)
from supportgate.manifests._convert import MAX_PROBLEMS, convert, with_named_field
from supportgate.manifests._raw import MAX_DEPTH, Raw, RawMapping, parse_json
from supportgate.manifests._yaml import parse_yaml
from supportgate.manifests.deployment import DeploymentManifest
from supportgate.manifests.hardware import HardwareManifest
from supportgate.manifests.locate import locate_mark
from supportgate.manifests.matrix import Matrix

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "Format",
    "Manifest",
    "decode_json",
    "decode_manifest",
    "decode_manifest_request",
    "decode_manifests",
    "decode_matrix",
    "format_of",
    "to_builtins",
    "with_named_field",
]

MAX_BYTES: Final = 1024 * 1024
"""Largest document accepted, in bytes (larger bodies are 413)."""

Format = Literal["json", "yaml"]
T = TypeVar("T")
Manifest = HardwareManifest | DeploymentManifest


def format_of(name: str) -> Format:
    return "json" if name.lower().endswith(".json") else "yaml"


_MEDIA_TYPES: dict[str, Format] = {
    "application/json": "json",
    "application/yaml": "yaml",
    "application/x-yaml": "yaml",
    "text/yaml": "yaml",
    "text/x-yaml": "yaml",
}


def format_for_media_type(content_type: str | None) -> Format:
    """The format a Content-Type names (no Content-Type: JSON); others are refused (415)."""
    if not content_type:
        return "json"
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type in _MEDIA_TYPES:
        return _MEDIA_TYPES[media_type]
    if media_type.endswith("+json"):
        return "json"
    raise UnsupportedMediaType(
        f"{media_type!r} is not supported; send application/json or application/yaml",
        field="Content-Type",
    )


def _text(data: bytes) -> str:
    if len(data) > MAX_BYTES:
        raise DocumentTooLargeError(
            f"the document is {len(data)} bytes; the limit is {MAX_BYTES} bytes (1 MiB)"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"the document is not UTF-8 (bad byte at offset {exc.start})") from None


def _documents(data: bytes, fmt: Format, source: str | None) -> tuple[str, list[tuple[int, Raw]]]:
    """The text, and its non-empty documents with their index in the stream (empty ones count)."""
    try:
        text = _text(data)
        if fmt == "json":
            return text, [(0, parse_json(text))]
        return text, [(i, doc) for i, doc in enumerate(parse_yaml(text)) if doc is not None]
    except ManifestError as exc:
        raise _sourced(exc, source) from None


def _located(error: ManifestError, text: str, document_index: int) -> ManifestError:
    """After the first, the problems in the order they are written."""
    problems = [_at(problem, text, document_index) for problem in error.problems]
    first, *rest = problems
    rest.sort(key=lambda p: (p.line is None, p.line or 0, p.column or 0))
    return error.with_problems((first, *rest))


def _at(problem: FieldProblem, text: str, document_index: int) -> FieldProblem:
    found = None if problem.line is not None else locate_mark(text, problem.field, document_index)
    return problem if found is None else replace(problem, line=found[0], column=found[1])


def _convert_each(
    text: str,
    docs: list[tuple[int, Raw]],
    target: Any,
    *,
    numbers_as_text: bool,
    source: str | None,
    numbers: list[int] | None = None,
) -> list[Any]:
    """The problems of every failing document together, each naming its document (by
    `numbers`, else by its place in `docs` from 1) when there are several."""
    values: list[Any] = []
    failed: list[ManifestError] = []
    several = len(docs) > 1 or numbers is not None
    for position, (index, doc) in enumerate(docs):
        number = position + 1 if numbers is None else numbers[position]
        try:
            values.append(convert(doc, target, numbers_as_text=numbers_as_text))
        except ManifestError as exc:
            located = _located(exc, text, index)
            if several:
                where = f"document {number}" if source is None else f"{source}, document {number}"
                failed.append(located.with_source(where))
            else:
                failed.append(_sourced(located, source))
    if failed:
        problems = [problem for error in failed for problem in error.problems]
        raise failed[0].with_problems(tuple(problems[:MAX_PROBLEMS]))
    return values


_manifest_json: Final = msgspec.json.Decoder(Manifest)


def _clean_json_manifest(data: bytes) -> Manifest | None:
    """A speed device (docs/performance.md); None sends the careful path to name the field.
    Its rules hold when msgspec's strict decode succeeds, no backslash-u escape (no NUL, no
    lone surrogate) and no repeated key (which msgspec accepts). Oracle: test_decode_fast.py.
    """
    if len(data) > MAX_BYTES or b"\\u" in data:
        return None
    try:
        manifest: Manifest = _manifest_json.decode(data)
        if not _repeats_no_key(data):
            return None
    except (msgspec.DecodeError, RecursionError):
        return None  # msgspec.ValidationError is a DecodeError; deep nesting may recurse
    return manifest


def _repeats_no_key(data: bytes) -> bool:
    """Compacted text keeps a repeated key, a decode and encode loses it: equal bytes prove none
    repeats (unequal ones may be `1.50`, `1e3`, `\\/` normalised: the careful way decides)."""
    return msgspec.json.format(data, indent=-1) == msgspec.json.encode(msgspec.json.decode(data))


def _sourced(error: ManifestError, source: str | None) -> ManifestError:
    return error if source is None else error.with_source(source)


def _decode_one(data: bytes, target: Any, what: str, *, fmt: Format, source: str | None) -> Any:
    text, docs = _documents(data, fmt, source)
    if len(docs) != 1:
        raise _sourced(ManifestError(f"expected one {what}, found {len(docs)} documents"), source)
    return _convert_each(text, docs, target, numbers_as_text=fmt == "yaml", source=source)[0]


def decode_manifest(data: bytes, *, fmt: Format, source: str | None = None) -> Manifest:
    fast = _clean_json_manifest(data) if fmt == "json" else None
    if fast is not None:
        return fast
    return cast(Manifest, _decode_one(data, Manifest, "manifest", fmt=fmt, source=source))


def decode_manifests(data: bytes, *, fmt: Format, source: str | None = None) -> list[Manifest]:
    """One manifest per YAML document, or a JSON manifest or array of them (paths `$[i]`)."""
    text, docs = _documents(data, fmt, source)
    if fmt == "json":
        target = list[Manifest] if isinstance(docs[0][1], list) else Manifest
        [found] = _convert_each(text, docs, target, numbers_as_text=False, source=source)
        return cast(list[Manifest], found if isinstance(found, list) else [found])
    return _convert_each(text, docs, Manifest, numbers_as_text=True, source=source)


SUPPORTGATE_API_VERSION: Final = "supportgate/v1"


def decode_supportgate_documents(
    data: bytes, *, fmt: Format, source: str | None = None
) -> tuple[list[tuple[int, Manifest]], list[int]]:
    """The manifests with their index in the stream, and the numbers (from 1) of the documents
    of other apiVersions (Kubernetes, Helm values). A file that never says `supportgate/v1` is
    passed over unread (`[1]`): a Helm template is not even YAML."""
    if SUPPORTGATE_API_VERSION.encode() not in data:
        return [], [1]
    text, docs = _documents(data, fmt, source)
    ours = [
        (number, doc)
        for number, doc in enumerate(docs, start=1)
        if not isinstance(doc[1], RawMapping)
        or any(
            key == "apiVersion" and value == SUPPORTGATE_API_VERSION for key, value in doc[1].pairs
        )
    ]
    skipped = sorted(set(range(1, len(docs) + 1)) - {number for number, _ in ours})
    numbers = [number for number, _ in ours] if len(docs) > 1 else None
    manifests = _convert_each(
        text,
        [doc for _, doc in ours],
        Manifest,
        numbers_as_text=fmt == "yaml",
        source=source,
        numbers=numbers,
    )
    return [(doc[0], m) for (_, doc), m in zip(ours, manifests, strict=True)], skipped


class _ManifestList(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """`{"manifests": [...]}`: the body that carries several manifests in one JSON document."""

    manifests: list[Manifest]


def decode_manifest_request(data: bytes, *, fmt: Format, limit: int) -> list[Manifest]:
    """One manifest, a YAML stream or `{"manifests": [...]}`; 1 to `limit`, no kind and name
    twice."""
    text, docs = _documents(data, fmt, None)
    wrapped = (
        len(docs) == 1
        and isinstance(docs[0][1], RawMapping)
        and [key for key, _ in docs[0][1].pairs] == ["manifests"]
    )
    target = _ManifestList if wrapped else Manifest
    found = _convert_each(text, docs, target, numbers_as_text=fmt == "yaml", source=None)
    manifests: list[Manifest] = found[0].manifests if wrapped else found
    if not 1 <= len(manifests) <= limit:
        field = "$.manifests" if wrapped else "$"
        raise ManifestError(f"give 1 to {limit} manifests, not {len(manifests)}", path=field)
    seen: set[tuple[str, str]] = set()
    for index, manifest in enumerate(manifests):
        key = (manifest.kind, manifest.metadata.name)
        if key in seen:
            message = f"{key[0]} {key[1]!r} is given twice (a manifest is its kind and name)"
            if wrapped:
                raise ManifestError(message, path=f"$.manifests[{index}].metadata.name")
            raise ManifestError(message, path="$.metadata.name", source=f"document {index + 1}")
        seen.add(key)
    return manifests


def decode_json(data: bytes, target: type[T]) -> T:
    """A request body under the manifests' rules (limits, no duplicate keys, no NUL)."""
    return cast(T, convert(parse_json(_text(data)), target, numbers_as_text=False))


def decode_matrix(data: bytes, *, fmt: Format, source: str | None = None) -> Matrix:
    return cast(Matrix, _decode_one(data, Matrix, "matrix", fmt=fmt, source=source))


def to_builtins(struct: msgspec.Struct) -> dict[str, Any]:
    """Exactly what the canonical JSON decodes to (absent optionals omitted, never null)."""
    return cast(dict[str, Any], msgspec.json.decode(msgspec.json.encode(struct)))
