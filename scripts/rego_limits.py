"""Check Rego files against Regal's default style limits (Regal is not installable here).

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


class ParseError(Exception):
    pass


def rego_files(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        found.extend(sorted(path.rglob("*.rego")) if path.is_dir() else [path])
    return found


def breaches(path: Path, opa: str) -> Iterator[tuple[int, str]]:
    """(line, message) for each limit the file exceeds."""
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    lines = text.split("\n")
    if len(lines) > MAX_FILE_LINES:
        yield 1, f"file-length: {len(lines)} lines, more than {MAX_FILE_LINES}"
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_CHARS and not _has_unbreakable_word(line):
            yield number, f"line-length: {len(line)} characters, more than {MAX_LINE_CHARS}"
    for rule in _rules(path, opa):
        yield from _rule_breach(rule)


def _has_unbreakable_word(line: str) -> bool:
    return any(len(word) > UNBREAKABLE_WORD_CHARS for word in line.split(" "))


def _rules(path: Path, opa: str) -> list[dict[str, Any]]:
    parsed = subprocess.run(
        [opa, "parse", "--format", "json", "--json-include", "locations,-comments", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if parsed.returncode != 0:
        raise ParseError(parsed.stderr.strip() or parsed.stdout.strip())
    rules: list[dict[str, Any]] = json.loads(parsed.stdout).get("rules", [])
    return rules


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
    found = 0
    for path in files:
        try:
            for line, message in breaches(path, opa):
                print(f"{path}:{line}: {message}")
                found += 1
        except ParseError as exc:
            print(f"{path}: opa parse failed: {exc}", file=sys.stderr)
            return 2
    if found:
        print(f"{found} breaches of Regal's default limits in {len(files)} files", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
