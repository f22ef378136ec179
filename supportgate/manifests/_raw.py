"""The raw tree both parsers produce, and the JSON parser: numbers keep their written text
(`version: 9.20` can become "9.20", never 9.2) and mappings keep repeated keys, so that
`_convert` can decide and refuse with the path."""

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
    """`value` is None for one too large to read, refused with its path where a number is
    wanted."""

    value: int | float | None
    text: str


DECIMAL: Final = 10
MAX_INTEGER_DIGITS: Final = 20
"""More than MAX_SAFE_INTEGER's 16, far fewer than Python's 4300-digit int() limit (a
ValueError), so reading one is cheap and never fails."""


def read_integer(text: str, base: int = DECIMAL) -> int | float | None:
    """Beyond MAX_INTEGER_DIGITS, the nearest float (as msgspec reads it for a float field), or
    None beyond the largest double or in another base than 10."""
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) <= MAX_INTEGER_DIGITS:
        return sign * int(digits, base)
    return read_float(text) if base == DECIMAL else None


def read_float(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


SHOWN_LENGTH: Final = 40


def shown(text: str) -> str:
    if len(text) <= SHOWN_LENGTH:
        return text
    return f"{text[:20]}...{text[-4:]} ({len(text)} characters)"


@dataclass(slots=True)
class RawMapping:
    """`marks` (YAML only): each key's 1-based line and column."""

    pairs: list[tuple[str, Raw]] = field(default_factory=list)
    marks: list[tuple[int, int]] = field(default_factory=list)


Raw: TypeAlias = "str | bool | Number | RawMapping | list[Raw] | None"


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


def join(path: str, key: str | int) -> str:
    """`$.spec`, `$.labels['a.b/c']`, `$.items[0]`."""
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


def _constant(text: str) -> Raw:
    raise ManifestError(f"{text} is not valid JSON")


def parse_json(text: str) -> Raw:
    check_json_depth(text)
    try:
        tree: Raw = json.loads(
            text,
            object_pairs_hook=RawMapping,
            parse_int=lambda text: Number(read_integer(text), text),
            parse_float=lambda text: Number(read_float(text), text),
            parse_constant=_constant,
        )
    except json.JSONDecodeError as exc:
        raise ManifestError(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            line=exc.lineno,
            column=exc.colno,
        ) from None
    return tree
