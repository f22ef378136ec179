"""The raw document tree both parsers produce, and the JSON parser.

A parsed document keeps what the typed conversion needs to decide later: every number
carries the text it was written as (so `version: 9.20` can become "9.20", never 9.2), and
every mapping keeps its keys in order with duplicates still visible (so they can be refused
with their path). `supportgate.manifests._convert` turns this tree into plain builtins.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from supportgate.errors import ManifestError

MAX_DEPTH: Final = 64
"""Deepest nesting of mappings and sequences accepted (real documents use fewer than 8)."""


@dataclass(frozen=True, slots=True)
class Number:
    """A number as parsed (`value`) and as written (`text`)."""

    value: int | float
    text: str


@dataclass(slots=True)
class RawMapping:
    """A mapping's entries in document order; `lines` (YAML only) gives each key's line."""

    pairs: list[tuple[str, Raw]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)


Raw: TypeAlias = "str | bool | Number | RawMapping | list[Raw] | None"


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


def join(path: str, key: str | int) -> str:
    """`path` extended by a mapping key (`$.spec`, `$.labels['a.b/c']`) or a list index."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _PLAIN_KEY.match(key):
        return f"{path}.{key}"
    quoted = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"{path}['{quoted}']"


def too_deep(path: str = "$") -> ManifestError:
    return ManifestError(f"the document is nested deeper than {MAX_DEPTH} levels", path=path)


# A JSON string token, or one bracket. Strings are consumed whole so brackets in them do not
# count; the alternatives are disjoint, so matching stays linear in the input.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def check_json_depth(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH without recursing (the stdlib parser recurses)."""
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        char = match.group()
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise too_deep()
        elif char in "]}":
            depth -= 1


def _pairs(pairs: list[tuple[str, Raw]]) -> RawMapping:
    return RawMapping(pairs)


def _integer(text: str) -> Number:
    return Number(int(text), text)


def _real(text: str) -> Number:
    value = float(text)
    if not math.isfinite(value):
        raise ManifestError(f"the number {text} is out of range")
    return Number(value, text)


def _constant(text: str) -> Raw:
    raise ManifestError(f"{text} is not valid JSON")


def parse_json(text: str) -> Raw:
    """One JSON document (an object, or for manifests also an array) as a raw tree."""
    check_json_depth(text)
    try:
        tree: Raw = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_int=_integer,
            parse_float=_real,
            parse_constant=_constant,
        )
    except json.JSONDecodeError as exc:
        raise ManifestError(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more than 4300 digits
        raise ManifestError(f"not valid JSON: {exc}") from None
    return tree
