"""The line (and column) of a manifest path (`spec.service.kv_cache`) in YAML or JSON text.

Only node marks are read (nothing is constructed, so nothing executes or expands). A path
not in the text (a rule about a missing field) resolves to its nearest existing ancestor.
"""

from __future__ import annotations

import re
from functools import lru_cache

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_PART = re.compile(r"([^\[\]]*)((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")


def locate(text: str | None, dotted_path: str, document_index: int = 0) -> int | None:
    """Accepts a leading `$.` and list indices as `items.0` or `items[0]`."""
    found = locate_mark(text, dotted_path, document_index)
    return None if found is None else found[0]


def locate_mark(
    text: str | None, dotted_path: str, document_index: int = 0
) -> tuple[int, int] | None:
    if text is None or document_index < 0:
        return None
    root = _document(text, document_index)
    if root is None:
        return None
    return _walk(root, _segments(dotted_path))


@lru_cache(maxsize=32)
def _document(text: str, document_index: int) -> Node | None:
    if text.lstrip().startswith(("{", "[")):
        # JSON allows tabs as whitespace, YAML does not; a tab is never inside a valid JSON
        # string, and replacing it with a space moves no line.
        text = text.replace("\t", " ")
    try:
        for index, node in enumerate(yaml.compose_all(text, Loader=yaml.SafeLoader)):
            if index == document_index:
                return node
    except (yaml.YAMLError, RecursionError):
        return None
    return None


def _segments(dotted_path: str) -> list[str]:
    path = dotted_path.strip()
    if path.startswith("$"):
        path = path[1:]
    segments: list[str] = []
    for part in path.split("."):
        if not part:
            continue
        match = _PART.fullmatch(part)
        if match is None:
            segments.append(part)
            continue
        if match.group(1):
            segments.append(match.group(1))
        segments.extend(_INDEX.findall(match.group(2)))
    return segments


def _mark(node: Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _walk(root: Node, segments: list[str]) -> tuple[int, int]:
    node = root
    line = _mark(root)
    i = 0
    while i < len(segments):
        if isinstance(node, MappingNode):
            entry = _entry(node, segments, i)
            if entry is None:
                return line
            key, node, i = entry
            line = _mark(key)
        elif isinstance(node, SequenceNode) and segments[i].isdigit():
            index = int(segments[i])
            if index >= len(node.value):
                return line
            node = node.value[index]
            line = _mark(node)
            i += 1
        else:
            return line
    return line


def _entry(node: MappingNode, segments: list[str], start: int) -> tuple[Node, Node, int] | None:
    """The longest run of segments first: a key may hold dots (`app.kubernetes.io/name`)."""
    for end in range(len(segments), start, -1):
        wanted = ".".join(segments[start:end])
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == wanted:
                return key, value, end
    return None
