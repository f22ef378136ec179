"""From a raw tree to a validated Struct, with every error naming its JSON path.

`plain` walks the raw tree beside the target's type: a number where a string is wanted is
its written text in YAML (`version: 9.20` is "9.20") and refused in JSON; an integral float
where an integer is wanted is that integer (JSON Schema's `integer`). msgspec stops at the
first problem and writes dict keys as `[...]`, so a failed conversion is walked part by part
to find every problem (CONTRACT 10.8). NUL and unpaired surrogates are refused: PostgreSQL's
text and UTF-8 cannot hold them.
"""

from __future__ import annotations

import functools
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Final

import msgspec
from msgspec import inspect as mi

from supportgate.errors import ManifestError
from supportgate.manifests._raw import Number, Raw, RawMapping, join, shown
from supportgate.manifests.common import MAX_SAFE_INTEGER, PATTERNS, FieldError

Segment = str | int | None
"""One step of a path: a key, a list index, or None for a dict key msgspec did not name."""

_AT = re.compile(r"\A(?P<message>.*) - at `(?P<path>\$[^`]*)`\Z", re.DOTALL)
_FIELD = re.compile(r"\AObject (?:contains unknown|missing required) field `(?P<field>[^`]+)`\Z")
_REGEX = re.compile(r"\AExpected `str` matching regex (?P<regex>'.*')\Z", re.DOTALL)
_SEGMENT = re.compile(r"\.(?P<key>[^.\[]+)|\[(?P<index>[0-9]+|\.\.\.)\]")
_ARRAYS = (mi.ListType, mi.VarTupleType, mi.SetType, mi.FrozenSetType)


@functools.cache
def _info(target: Any) -> mi.Type:
    return mi.type_info(target)


def _unwrap(kind: mi.Type | None) -> mi.Type | None:
    return kind.type if isinstance(kind, mi.Metadata) else kind


def _members(kind: mi.Type | None) -> tuple[mi.Type, ...]:
    kind = _unwrap(kind)
    if isinstance(kind, mi.UnionType):
        return tuple(member for member in map(_unwrap, kind.types) if member is not None)
    return () if kind is None else (kind,)


def _wants_text(kind: mi.Type | None) -> bool:
    members = _members(kind)
    text = any(
        isinstance(m, mi.StrType)
        or (isinstance(m, mi.LiteralType) and all(isinstance(v, str) for v in m.values))
        for m in members
    )
    return text and not any(isinstance(m, mi.IntType | mi.FloatType) for m in members)


def _wants_float(kind: mi.Type | None) -> bool:
    return any(isinstance(m, mi.FloatType) for m in _members(kind))


def _wants_integer(kind: mi.Type | None) -> bool:
    members = _members(kind)
    integer = any(isinstance(m, mi.IntType) for m in members)
    return integer and not any(isinstance(m, mi.FloatType) for m in members)


def _shape(
    kind: mi.Type | None, tag_of: Callable[[str], object]
) -> mi.StructType | mi.DictType | None:
    """A tagged union's member by its tag."""
    shapes = [m for m in _members(kind) if isinstance(m, mi.StructType | mi.DictType)]
    tagged = [m for m in shapes if isinstance(m, mi.StructType) and m.tag_field is not None]
    if tagged:
        shapes = [m for m in tagged if tag_of(str(m.tag_field)) == m.tag]
    return shapes[0] if len(shapes) == 1 else None


def _value_types(kind: mi.Type | None, mapping: RawMapping) -> Callable[[str], mi.Type | None]:
    shape = _shape(kind, lambda tag: next((v for k, v in mapping.pairs if k == tag), None))
    if shape is None:
        return lambda _key: None
    if isinstance(shape, mi.DictType):
        return lambda _key: shape.value_type
    return {field.encode_name: field.type for field in shape.fields}.get


def _item_type(kind: mi.Type | None) -> mi.Type | None:
    arrays = [m for m in _members(kind) if isinstance(m, _ARRAYS)]
    return arrays[0].item_type if len(arrays) == 1 else None


def _storable(text: str, path: str) -> str:
    if "\x00" in text:
        raise ManifestError("NUL characters (\\u0000) are not accepted in text", path=path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ManifestError(
            "unpaired UTF-16 surrogates (e.g. \\ud800) are not accepted in text", path=path
        ) from None
    return text


def _number(node: Number, kind: mi.Type | None, path: str, *, numbers_as_text: bool) -> object:
    """An integral one beyond MAX_SAFE_INTEGER is refused where no float is wanted (where one
    is, it is a float, as in the one-pass JSON decoding of a manifest)."""
    if _wants_text(kind):
        if numbers_as_text:
            return node.text
        number = shown(node.text)
        raise ManifestError(
            f'expected a string, got the number {number}: quote it ("{number}");'
            " JSON numbers are not read as text (a version 3.10 would become 3.1)",
            path=path,
        )
    value = node.value
    integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if value is None or (integral and abs(value) > MAX_SAFE_INTEGER and not _wants_float(kind)):
        raise ManifestError(
            f"the number {shown(node.text)} is out of range: integers must lie between"
            f" -{MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER}, other numbers be finite doubles",
            path=path,
        )
    if isinstance(value, float) and integral and _wants_integer(kind):
        return int(value)
    return value


def plain(
    node: Raw,
    kind: mi.Type | None,
    path: str,
    *,
    numbers_as_text: bool,
    found: list[ManifestError],
) -> object:
    """A problem inside goes to `found` and its entry is left out, so one walk finds all."""
    if isinstance(node, str):
        return _storable(node, path)
    if isinstance(node, Number):
        return _number(node, kind, path, numbers_as_text=numbers_as_text)
    if isinstance(node, list):
        item = _item_type(kind)
        items: list[object] = []
        for index, value in enumerate(node):
            here = join(path, index)
            items.append(_entry(value, item, here, numbers_as_text=numbers_as_text, found=found))
        return items
    if isinstance(node, RawMapping):
        value_type = _value_types(kind, node)
        out: dict[str, object] = {}
        for index, (key, value) in enumerate(node.pairs):
            try:
                here = _key_path(path, key, out, node.marks[index] if node.marks else None)
            except ManifestError as exc:
                found.append(exc)
                continue
            entry = _entry(
                value, value_type(key), here, numbers_as_text=numbers_as_text, found=found
            )
            if entry is not _LEFT_OUT:
                out[key] = entry
        return out
    return node


_LEFT_OUT: Final = object()


def _key_path(path: str, key: str, seen: dict[str, object], mark: tuple[int, int] | None) -> str:
    here = join(path, _storable(key, path))
    if key in seen:
        line, column = mark or (None, None)
        where = "" if line is None else f" (line {line})"
        raise ManifestError(f"duplicate key `{key}`{where}", path=here, line=line, column=column)
    return here


def _entry(
    value: Raw,
    kind: mi.Type | None,
    path: str,
    *,
    numbers_as_text: bool,
    found: list[ManifestError],
) -> object:
    try:
        return plain(value, kind, path, numbers_as_text=numbers_as_text, found=found)
    except ManifestError as exc:
        found.append(exc)
        return _LEFT_OUT


def convert(node: Raw, target: Any, *, numbers_as_text: bool) -> Any:
    found: list[ManifestError] = []
    tree = plain(node, _info(target), "$", numbers_as_text=numbers_as_text, found=found)
    if not found:  # the usual case: one conversion
        try:
            return msgspec.convert(tree, target)
        except msgspec.ValidationError:
            pass
    left_out = tuple(error.path for error in found)  # entries `plain` refused and dropped
    found += [
        error
        for error in _validation_problems(tree, target, "$")
        if not _within(error.path, left_out)
    ]
    problems = tuple(error.problems[0] for error in found[:MAX_PROBLEMS])
    raise found[0].with_problems(problems)


MAX_PROBLEMS: Final = 50


def _within(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith((root + ".", root + "[")) for root in roots)


def _validation_problems(tree: object, target: Any, path: str) -> list[ManifestError]:
    """Walked in the order msgspec reads (keys as written, then missing fields), so the first
    problem is msgspec's own; its error is kept only when no part fails (a cross-field check)."""
    try:
        msgspec.convert(tree, target)
    except msgspec.ValidationError as exc:
        error = exc
    else:
        return []
    found: list[ManifestError] = []
    shape = _shape(_info(target), tree.get) if isinstance(tree, dict) else None
    if isinstance(shape, mi.StructType) and isinstance(tree, dict):
        fields = {field.encode_name: field for field in msgspec.structs.fields(shape.cls)}
        tag = shape.tag_field
        for key, value in tree.items():
            if key in fields:
                found += _validation_problems(value, fields[key].type, join(path, key))
            elif key != tag:
                message = f"Object contains unknown field `{key}`"
                found.append(ManifestError(message, path=join(path, key)))
        found += [
            ManifestError(f"Object missing required field `{name}`", path=join(path, name))
            for name, field in fields.items()
            if field.required and name not in tree
        ]
    else:
        for key, value, kind in _entries(target, tree):
            found += _validation_problems(value, kind, join(path, key))
    if not found:
        found.append(_translate(error, tree, path))
    return found


def _entries(target: Any, tree: object) -> list[tuple[str | int, object, Any]]:
    origin, args = typing.get_origin(target), typing.get_args(target)
    if origin is typing.Annotated:
        return _entries(args[0], tree)
    if origin in (types.UnionType, typing.Union):
        members = [arg for arg in args if arg is not type(None)]
        return _entries(members[0], tree) if len(members) == 1 else []
    if origin in (list, tuple, set, frozenset) and isinstance(tree, list) and args:
        return [(index, value, args[0]) for index, value in enumerate(tree)]
    if origin is dict and isinstance(tree, dict) and len(args) == 2:  # noqa: PLR2004 - key, value
        return [
            (str(key), item, kind)
            for key, value in tree.items()
            for item, kind in ((key, args[0]), (value, args[1]))
        ]
    return []


def _split(error: msgspec.ValidationError) -> tuple[str, list[Segment]]:
    found = _AT.match(str(error))
    if found is None:
        return str(error), []
    segments: list[Segment] = []
    for step in _SEGMENT.finditer(found["path"]):
        index = step["index"]
        segments.append(step["key"] if index is None else None if index == "..." else int(index))
    return found["message"], segments


def _translate(error: msgspec.ValidationError, tree: object, root: str) -> ManifestError:
    message, segments = _split(error)
    path = functools.reduce(lambda p, s: join(p, "..." if s is None else s), segments, root)
    path = with_named_field(path, message)
    constrained = _REGEX.match(message)
    if constrained and constrained["regex"] in PATTERNS:
        message = f"expected {PATTERNS[constrained['regex']]}, got {_get(tree, segments)!r}"
    cause = error.__cause__
    if isinstance(cause, FieldError):
        path = functools.reduce(join, cause.field.split("."), path)
        message = cause.message
    return ManifestError(message, path=path)


def with_named_field(path: str, message: str) -> str:
    """msgspec names a missing or unknown field only in its message."""
    named = _FIELD.match(message)
    return join(path, named["field"]) if named else path


def _get(node: object, segments: list[Segment]) -> object:
    for segment in segments:
        if isinstance(node, dict) and isinstance(segment, str):
            node = node.get(segment)
        elif isinstance(node, list) and isinstance(segment, int) and segment < len(node):
            node = node[segment]
        else:
            return None
    return node
