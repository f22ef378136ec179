"""Safe YAML: documents built from PyYAML's event stream, without its constructors.

Its composer and constructors recurse and resolve YAML 1.1 types (`no` as false, `9.20` as
9.2, timestamps, merge keys); built from events, the read stays iterative, so the nesting
limit holds before any recursion. Tags, anchors, aliases and non-scalar keys are refused;
plain scalars resolve by the YAML 1.2 core schema (`no`, `.inf` stay strings); keys stay
strings as written; duplicate keys are left for `_convert` to refuse.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import yaml

from supportgate.errors import ManifestError
from supportgate.manifests._raw import (
    MAX_DEPTH,
    Number,
    Raw,
    RawMapping,
    join,
    read_integer,
    too_deep,
)

Loader = type[yaml.SafeLoader | yaml.CSafeLoader]

LOADER: Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser when PyYAML has it (25 times faster on a 1 MiB document). Both are
iterative; libyaml's own cap (1000 flow levels) is reported as invalid YAML."""

_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INTEGERS = (  # pattern, base, prefix length
    (re.compile(r"[-+]?[0-9]+\Z"), 10, 0),
    (re.compile(r"0o[0-7]+\Z"), 8, 2),
    (re.compile(r"0x[0-9a-fA-F]+\Z"), 16, 2),
)
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")


def resolve_plain(text: str) -> Raw:
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    for integer, base, prefix in _INTEGERS:
        if integer.match(text):
            return Number(read_integer(text[prefix:], base), text)
    if _FLOAT.match(text) and math.isfinite(value := float(text)):
        return Number(value, text)
    return text


@dataclass(slots=True)
class _Frame:
    """`key`: a mapping's key awaiting its value."""

    node: RawMapping | list[Raw]
    key: str | None = None
    key_mark: tuple[int, int] = (0, 0)

    def expects_key(self) -> bool:
        return isinstance(self.node, RawMapping) and self.key is None


def _path(stack: list[_Frame]) -> str:
    path = "$"
    for frame in stack:
        if isinstance(frame.node, list):
            path = join(path, len(frame.node))
        elif frame.key is not None:
            path = join(path, frame.key)
    return path


def _mark(event: yaml.Event) -> tuple[int, int]:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)


def _refuse(message: str, stack: list[_Frame], event: yaml.Event) -> ManifestError:
    line, column = _mark(event)
    return ManifestError(
        f"{message} (line {line})", path=_path(stack), line=line or None, column=column or None
    )


def _check(event: yaml.NodeEvent, stack: list[_Frame]) -> None:
    if isinstance(event, yaml.AliasEvent):
        raise _refuse(f"YAML aliases are not accepted (*{event.anchor})", stack, event)
    if event.anchor is not None:
        raise _refuse(f"YAML anchors are not accepted (&{event.anchor})", stack, event)
    tag = getattr(event, "tag", None)
    if tag is not None:
        raise _refuse(f"YAML tags are not accepted ({tag})", stack, event)


def _add(stack: list[_Frame], docs: list[Raw], value: Raw) -> None:
    if not stack:
        docs.append(value)
        return
    top = stack[-1]
    if isinstance(top.node, list):
        top.node.append(value)
    else:
        assert top.key is not None  # noqa: S101 - a mapping's key is always read before its value
        top.node.pairs.append((top.key, value))
        top.node.marks.append(top.key_mark)
        top.key = None


def parse_yaml(text: str, *, loader: Loader = LOADER) -> list[Raw]:
    docs: list[Raw] = []
    stack: list[_Frame] = []
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.NodeEvent):
                _check(event, stack)
            expects_key = bool(stack) and stack[-1].expects_key()
            if isinstance(event, yaml.ScalarEvent) and expects_key:
                stack[-1].key, stack[-1].key_mark = event.value, _mark(event)
            elif isinstance(event, yaml.ScalarEvent):
                plain = not event.style  # PyYAML says None, libyaml ""
                _add(stack, docs, resolve_plain(event.value) if plain else event.value)
            elif isinstance(event, yaml.CollectionStartEvent):
                if expects_key:
                    raise _refuse("mapping keys must be scalars", stack, event)
                if len(stack) >= MAX_DEPTH:
                    raise too_deep(_path(stack))
                mapping = isinstance(event, yaml.MappingStartEvent)
                stack.append(_Frame(RawMapping() if mapping else []))
            elif isinstance(event, yaml.CollectionEndEvent):
                _add(stack, docs, stack.pop().node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        context = f"{exc.context}: " if exc.context else ""
        message = f"not valid YAML: {context}{exc.problem}{where}"
        line, column = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise ManifestError(message, path=_path(stack), line=line, column=column) from None
    except yaml.YAMLError as exc:  # e.g. a character YAML does not allow
        raise ManifestError(f"not valid YAML: {exc}", path=_path(stack)) from None
    return docs
