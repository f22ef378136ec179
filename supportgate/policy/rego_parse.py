"""A Rego module as the parser reads it (regorus's AST, so no `opa` is needed), never as text
patterns (CONTRACT 11.2). The AST drops comments, so a rule's METADATA block is read from the
source between the statement before the rule and the rule: only comments can be there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import regorus
import yaml

from supportgate.errors import SupportgateError

FINDING_SETS = ("deny", "warn")
_ERROR_AT = re.compile(r"-->\s*(?P<file>[^\s:]+):(?P<line>\d+):\d+")
_ERROR_TEXT = re.compile(r"^error:\s*(?P<text>.+)$", re.MULTILINE)


class RegoSyntaxError(SupportgateError):
    def __init__(self, module: str, line: int, message: str) -> None:
        super().__init__(message)
        self.module, self.line, self.message = module, line, message


@dataclass(frozen=True, slots=True)
class Rule:
    name: str  # the head's reference as written (`deny`, `deny.extra`, `_helper`)
    line: int
    is_set: bool  # `name contains key`
    fields: dict[str, str | None] | None
    """For a set whose key is an object literal: each field, its string constant or None."""
    metadata: dict[str, Any] | None  # {} when the block is not a YAML mapping


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    line: int


@dataclass(frozen=True, slots=True)
class ParsedModule:
    package: str
    package_line: int
    rules: tuple[Rule, ...]
    calls: tuple[Call, ...]


def parse_module(module: str, text: str) -> ParsedModule:
    engine = regorus.Engine()
    try:
        package = engine.add_policy(module, text)
    except RuntimeError as exc:
        raise syntax_error(exc, module) from exc
    ast = json.loads(engine.get_ast_as_json())[0]["ast"]
    source = text.encode()
    ends = sorted(
        [ast["package"]["span"]["end"]]
        + [item["span"]["end"] for item in ast.get("imports", [])]
        + [_node(rule)["span"]["end"] for rule in ast["rules"]]
    )
    rules = tuple(_rule(rule, source, ends) for rule in ast["rules"])
    return ParsedModule(
        package=str(package).removeprefix("data."),
        package_line=ast["package"]["span"]["line"],
        rules=rules,
        calls=tuple(_calls(ast["rules"])),
    )


def regorus_message(exc: BaseException) -> str:
    """regorus errors carry a Rust backtrace after the message; keep the message."""
    return str(exc).split("\nStack backtrace:")[0].strip()


def syntax_error(exc: RuntimeError, module: str) -> RegoSyntaxError:
    text = regorus_message(exc)
    at = _ERROR_AT.search(text)
    message = _ERROR_TEXT.search(text)
    return RegoSyntaxError(
        at["file"] if at else module,
        int(at["line"]) if at else 1,
        message["text"].strip() if message else text,
    )


def _node(rule: dict[str, Any]) -> dict[str, Any]:
    [node] = rule.values()
    return dict(node)


def _rule(rule: dict[str, Any], source: bytes, ends: list[int]) -> Rule:
    node = _node(rule)
    span = node["span"]
    head = node.get("head", {"Default": node})
    [(kind, detail)] = head.items()
    fields = None
    if kind == "Set" and "Object" in (detail.get("key") or {}):
        fields = {
            _string(name) or "": _string(value)
            for _, name, value in detail["key"]["Object"]["fields"]
        }
    before = max((end for end in ends if end <= span["start"]), default=0)
    return Rule(
        name=ref_name(detail["refr"]),
        line=span["line"],
        is_set=kind == "Set",
        fields=fields,
        metadata=_metadata(source[before : span["start"]].decode()),
    )


def _string(node: dict[str, Any]) -> str | None:
    for kind in ("String", "RawString"):
        if kind in node:
            return str(node[kind]["value"])
    return None


def ref_name(node: dict[str, Any]) -> str:
    if "Var" in node:
        return str(node["Var"]["value"])
    if "RefDot" in node:
        return f"{ref_name(node['RefDot']['refr'])}.{node['RefDot']['field'][1]}"
    if "RefBrack" in node:
        index = _string(node["RefBrack"]["index"])
        return f"{ref_name(node['RefBrack']['refr'])}[{json.dumps(index) if index else '_'}]"
    return "?"


def _metadata(between: str) -> dict[str, Any] | None:
    """A blank line ends the block."""
    lines = between.split("\n")[:-1]  # the last piece is the rule's own line, before its head
    block: list[str] = []
    for line in reversed(lines):
        if not line.strip().startswith("#"):
            return None
        text = line.strip()[1:]
        if text.strip() == "METADATA":
            try:
                annotation = yaml.safe_load("\n".join(reversed(block)))
            except yaml.YAMLError:
                return {}
            return annotation if isinstance(annotation, dict) else {}
        block.append(text.removeprefix(" "))
    return None


def _calls(node: Any) -> Iterator[Call]:
    if isinstance(node, list):
        for item in node:
            yield from _calls(item)
    elif isinstance(node, dict):
        if "fcn" in node and "span" in node:
            yield Call(ref_name(node["fcn"]), node["span"]["line"])
        for value in node.values():
            yield from _calls(value)
