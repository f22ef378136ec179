"""Check Rego files against Regal's default limits and conventions (Regal is not installable here).

Usage: python scripts/rego_limits.py [PATH ...]   (files or directories; default: policies)

The limits and how Regal counts them (its style rules file-length, line-length, rule-length,
at their default settings):
- file-length: at most 500 lines, counted as Regal does: the text split on "\\n", so a
  final newline counts as one more (empty) line.
- line-length: at most 120 characters (Unicode code points; a tab is one), except a line
  holding a single word (split on spaces) longer than 100 characters, such as a URL.
- rule-length: at most 30 lines (60 for a rule whose name starts with `test_`), counting the
  lines of the rule's text, `else` branches included, less its lines that are comments;
  a rule without a body (`x := {...}`, `default ...`) is exempt.
The conventions (Regal's directory-package-mismatch, prefer-package-imports and
rule-name-repeats-package, at their defaults):
- directory-package-mismatch: the last directories of a file's path are its package's path
  (`a.b_test` counts as `a.b`, so tests sit beside what they test).
- prefer-package-imports: an import of `data.` names a package, not a rule inside one; the
  packages known are those of all the files checked together.
- rule-name-repeats-package: no rule's name starts with the last components of its package
  joined by `_` (or in camel case), e.g. `decision` or `decision_x` in `a.decision`.
One rule of our own, outside test files, for the embedded engine's sake:
- variable-index-chain: no reference indexed by two non-string terms (`x[a][b]`, `x[a].y[b]`),
  nor a call's result indexed (`f(a)[b]`): regorus builds an error for each evaluation of one
  and drops it, taking a backtrace when RUST_BACKTRACE is set (7% of a decision; issue 21 in
  docs/performance.md). Index one variable a step, or look the path up with object.get.
- data-variable-index: no `data.` reference indexed by a non-string term (`data.x.y[a]`):
  regorus looks such a reference up among the rules of every module, each time. Read the
  value into a local first, or look it up with object.get.
Rules are found in OPA's AST (`opa parse --format json`), which gives each rule's text and
its first line. `opa` is looked up on PATH, as scripts/rego_coverage.py does; ./scripts/test
installs it and puts `$(go env GOPATH)/bin` on PATH first (scripts/lib.sh ensure_opa_on_path).

Prints `file:line: message` for every breach and exits 1 if there is any (2 when `opa` is
missing or a file does not parse).
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_FILE_LINES = 500
MAX_LINE_CHARS = 120
UNBREAKABLE_WORD_CHARS = 100
MAX_RULE_LINES = 30
MAX_TEST_RULE_LINES = 60
MAX_VARIABLE_INDEXES = 1


class ParseError(Exception):
    pass


def rego_files(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        found.extend(sorted(path.rglob("*.rego")) if path.is_dir() else [path])
    return found


def breaches(
    path: Path, module: dict[str, Any], packages: set[tuple[str, ...]]
) -> Iterator[tuple[int, str]]:
    """(line, message) for each limit or convention the file breaks."""
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    lines = text.split("\n")
    if len(lines) > MAX_FILE_LINES:
        yield 1, f"file-length: {len(lines)} lines, more than {MAX_FILE_LINES}"
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_CHARS and not _has_unbreakable_word(line):
            yield number, f"line-length: {len(line)} characters, more than {MAX_LINE_CHARS}"
    package = _package(module)
    yield from _directory_mismatch(path, module, package)
    yield from _rule_imports(module, packages)
    if not package[-1].endswith("_test"):
        yield from _costly_references(module)
    prefixes = _repeating_prefixes(package)
    for rule in module.get("rules", []):
        yield from _rule_breach(rule)
        name = _rule_name(rule)
        if name.startswith(prefixes):
            line = rule["location"]["row"]
            yield (
                line,
                f"rule-name-repeats-package: rule {name} repeats package {'.'.join(package)}",
            )


def _has_unbreakable_word(line: str) -> bool:
    return any(len(word) > UNBREAKABLE_WORD_CHARS for word in line.split(" "))


def parse(path: Path, opa: str) -> dict[str, Any]:
    parsed = subprocess.run(
        [opa, "parse", "--format", "json", "--json-include", "locations,-comments", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if parsed.returncode != 0:
        raise ParseError(parsed.stderr.strip() or parsed.stdout.strip())
    module: dict[str, Any] = json.loads(parsed.stdout)
    return module


def _ref(terms: list[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(str(term["value"]) for term in terms)


def _package(module: dict[str, Any]) -> tuple[str, ...]:
    """The package's path without `data`, e.g. ("supportgate", "lib", "names")."""
    return _ref(module["package"]["path"])[1:]


def _directory_mismatch(
    path: Path, module: dict[str, Any], package: tuple[str, ...]
) -> Iterator[tuple[int, str]]:
    expected = (*package[:-1], package[-1].removesuffix("_test"))
    directories = path.resolve().parent.parts
    if directories[len(directories) - len(expected) :] != expected:
        yield (
            module["package"]["location"]["row"],
            f"directory-package-mismatch: package {'.'.join(package)} belongs in a directory "
            f"{'/'.join(expected)}",
        )


def _rule_imports(
    module: dict[str, Any], packages: set[tuple[str, ...]]
) -> Iterator[tuple[int, str]]:
    for imported in module.get("imports", []):
        ref = _ref(imported["path"]["value"])
        if ref[0] != "data" or ref[1:] in packages:
            continue
        owner = next((ref[1:n] for n in range(len(ref) - 1, 0, -1) if ref[1:n] in packages), None)
        if owner is not None:
            yield (
                imported["location"]["row"],
                f"prefer-package-imports: import {'.'.join(ref)} names a rule: import "
                f"data.{'.'.join(owner)} and write {owner[-1]}.{'.'.join(ref[len(owner) + 1 :])}",
            )


def _costly_references(node: object) -> Iterator[tuple[int, str]]:
    if isinstance(node, list):
        for item in node:
            yield from _costly_references(item)
        return
    if not isinstance(node, dict):
        return
    if node.get("type") == "ref":
        head, *indexes = node["value"]
        variables = [term for term in indexes if term["type"] != "string"]
        if len(variables) > MAX_VARIABLE_INDEXES or (head["type"] == "call" and variables):
            text = base64.b64decode(node["location"]["text"]).decode("utf-8")
            yield node["location"]["row"], f"variable-index-chain: {text}"
        elif (head["type"], head["value"]) == ("var", "data") and variables:
            text = base64.b64decode(node["location"]["text"]).decode("utf-8")
            yield node["location"]["row"], f"data-variable-index: {text}"
    for value in node.values():
        yield from _costly_references(value)


def _repeating_prefixes(package: tuple[str, ...]) -> tuple[str, ...]:
    tails = [package[-n:] for n in range(1, len(package) + 1)]
    joined = {"_".join(tail) for tail in tails}
    camel = {tail[0] + "".join(w[:1].upper() + w[1:] for w in tail[1:]) for tail in tails[1:]}
    return tuple(sorted(joined | camel))


def _rule_breach(rule: dict[str, Any]) -> Iterator[tuple[int, str]]:
    body = rule.get("body") or []
    if all(expression.get("generated") for expression in body):
        return  # no body of its own: a value written out (Regal's except-empty-body)
    location = rule["location"]
    text = base64.b64decode(location["text"]).decode("utf-8")
    counted = [line for line in text.split("\n") if not line.strip().startswith("#")]
    name = _rule_name(rule)
    limit = MAX_TEST_RULE_LINES if name.startswith("test_") else MAX_RULE_LINES
    if len(counted) > limit:
        message = f"rule-length: rule {name} has {len(counted)} lines, more than {limit}"
        yield location["row"], message


def _rule_name(rule: dict[str, Any]) -> str:
    ref = rule["head"].get("ref") or [{"value": rule["head"].get("name", "")}]
    return str(ref[0]["value"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[Path("policies")])
    args = parser.parse_args()
    opa = shutil.which("opa")
    if opa is None:
        print("opa is not on PATH", file=sys.stderr)
        return 2
    files = rego_files(args.paths)
    if not files:
        print(f"no .rego files in {' '.join(map(str, args.paths))}", file=sys.stderr)
        return 2
    modules: dict[Path, dict[str, Any]] = {}
    for path in files:
        try:
            modules[path] = parse(path, opa)
        except ParseError as exc:
            print(f"{path}: opa parse failed: {exc}", file=sys.stderr)
            return 2
    packages = {_package(module) for module in modules.values()}
    found = 0
    for path, module in modules.items():
        for line, message in breaches(path, module, packages):
            print(f"{path}:{line}: {message}")
            found += 1
    if found:
        print(f"{found} breaches of Regal's defaults in {len(files)} files", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
