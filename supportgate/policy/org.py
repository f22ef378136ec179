"""Organisation policy bundles (SUPPORTGATE_POLICY_BUNDLES, docs/organisation-policies.md).

A bundle is a directory or an OPA bundle file (`.tar.gz`) of Rego modules in packages
`supportgate.org.<name>`, each exposing `deny` and `warn` sets of `{rule, message, path}` as
the built-in concerns do; the decision takes every member of them. Here a bundle is read
(its `.rego` files; `_test.rego` files are kept apart for `supportgate policy test`) and
checked: every `deny`/`warn` rule under a METADATA block with an `org.` id, its severity, a
title and a description, no id another rule has, packages under `supportgate.org.`, and
modules that compile. A refusal names each file and line (PolicyRefused).
"""

from __future__ import annotations

import hashlib
import re
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regorus
import yaml

from supportgate.errors import UsageError

from .catalog import read_catalog

BUNDLES_SETTING = "SUPPORTGATE_POLICY_BUNDLES"
MODULE_PREFIX = "org/"
"""Organisation modules are named `org/<bundle>/<path>` among the policy modules, so no
bundle's file can take the place of a built-in one (those are under `supportgate/`)."""
ARCHIVE_SUFFIX = ".tar.gz"
ID_PREFIX = "org."
MAX_MODULE_BYTES = 1 << 20

_PACKAGE = re.compile(r"^package\s+(?P<name>\S+)")
_ORG_PACKAGE = re.compile(r"supportgate\.org\.[a-z_][a-z0-9_]*")
_HEAD = re.compile(r"^(?P<set>deny|warn)\b")
_BUNDLE_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")
_ERROR_AT = re.compile(r"-->\s*(?P<file>[^\s:]+):(?P<line>\d+):\d+")
_ERROR_TEXT = re.compile(r"^error:\s*(?P<text>.+)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class OrgBundle:
    name: str
    """The directory's name, or the file's without `.tar.gz`."""
    source: Path
    modules: tuple[tuple[str, str], ...]
    """The policy modules as (module name `org/<name>/<path>`, text), in path order."""
    tests: tuple[tuple[str, str], ...]
    """The `_test.rego` modules, likewise (only `supportgate policy test` loads them)."""

    @property
    def revision(self) -> str:
        """sha256 over the modules' names and texts: what the bundle's rules are."""
        digest = hashlib.sha256()
        for name, text in self.modules:
            digest.update(name.encode() + b"\0" + text.encode() + b"\0")
        return f"sha256:{digest.hexdigest()}"

    def file(self, module: str) -> str:
        """Where a module is, for a person: the bundle's path and the module's within it."""
        return f"{self.source}/{module.removeprefix(f'{MODULE_PREFIX}{self.name}/')}"


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class PolicyRefused(UsageError):
    """An organisation bundle that fails its check; `problems` name each file and line."""

    def __init__(self, problems: Sequence[Problem], *, field: str) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"  {problem}" for problem in problems)
        super().__init__(f"organisation policies refused:\n{lines}", field=field)


def read_bundles(paths: Iterable[Path], *, field: str = BUNDLES_SETTING) -> tuple[OrgBundle, ...]:
    bundles = tuple(read_bundle(path, field=field) for path in paths)
    names = [bundle.name for bundle in bundles]
    for bundle in bundles:
        if names.count(bundle.name) > 1:
            raise UsageError(f"two bundles are named {bundle.name!r}: rename one", field=field)
    return bundles


def read_bundle(path: Path, *, field: str = BUNDLES_SETTING) -> OrgBundle:
    """The bundle's `.rego` files (a UsageError naming `field` when it cannot be read)."""
    if path.is_dir():
        name = path.resolve().name
        files = _directory_files(path)
    elif path.name.endswith(ARCHIVE_SUFFIX) and path.is_file():
        name = path.name.removesuffix(ARCHIVE_SUFFIX)
        files = _archive_files(path, field=field)
    else:
        raise UsageError(f"{path} is neither a directory nor a {ARCHIVE_SUFFIX} file", field=field)
    if not _BUNDLE_NAME.fullmatch(name):
        raise UsageError(
            f"{path}: a bundle's name ({name!r}) is lower-case letters, digits, '_', '.', '-'",
            field=field,
        )
    modules = tuple(
        (f"{MODULE_PREFIX}{name}/{relative}", text)
        for relative, text in files
        if not relative.endswith("_test.rego")
    )
    tests = tuple(
        (f"{MODULE_PREFIX}{name}/{relative}", text)
        for relative, text in files
        if relative.endswith("_test.rego")
    )
    if not modules:
        raise UsageError(f"{path} holds no .rego policy files", field=field)
    return OrgBundle(name=name, source=path, modules=modules, tests=tests)


def _directory_files(directory: Path) -> list[tuple[str, str]]:
    return [
        (file.relative_to(directory).as_posix(), file.read_text(encoding="utf-8"))
        for file in sorted(directory.rglob("*.rego"))
        if file.is_file()
    ]


def _archive_files(path: Path, *, field: str) -> list[tuple[str, str]]:
    """The regular `.rego` members of an OPA bundle file (nothing is extracted to disk)."""
    files: list[tuple[str, str]] = []
    try:
        with tarfile.open(path, mode="r:gz") as archive:
            for member in archive.getmembers():
                relative = member.name.lstrip("/")
                if not member.isfile() or not relative.endswith(".rego"):
                    continue
                if ".." in relative.split("/") or member.size > MAX_MODULE_BYTES:
                    raise UsageError(f"{path}: refused member {member.name!r}", field=field)
                content = archive.extractfile(member)
                if content is not None:
                    files.append((relative, content.read().decode("utf-8")))
    except (OSError, tarfile.TarError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not a readable OPA bundle ({exc})", field=field) from exc
    return sorted(files)


# --- the check -------------------------------------------------------------------------------


def check_bundles(
    builtin: Sequence[tuple[str, str]], bundles: Sequence[OrgBundle]
) -> list[Problem]:
    """Everything wrong with the bundles beside the built-in modules (none: they may load)."""
    where = {module: bundle.file(module) for bundle in bundles for module, _ in bundle.modules}
    problems: list[Problem] = []
    declared: dict[str, str] = dict.fromkeys(read_catalog(builtin), "the built-in policies")
    for bundle in bundles:
        for module, text in bundle.modules:
            problems += _module_problems(where[module], text, declared)
    problems += _compile_problems(builtin, bundles, where)
    return problems


def refuse_problems(builtin: Sequence[tuple[str, str]], bundles: Sequence[OrgBundle]) -> None:
    problems = check_bundles(builtin, bundles)
    if problems:
        raise PolicyRefused(problems, field=BUNDLES_SETTING)


def _module_problems(file: str, text: str, declared: dict[str, str]) -> list[Problem]:
    lines = text.splitlines()
    problems: list[Problem] = []
    package = next(
        (
            (number, match["name"])
            for number, line in enumerate(lines, 1)
            if (match := _PACKAGE.match(line))
        ),
        None,
    )
    if package is not None and not _ORG_PACKAGE.fullmatch(package[1]):
        problems.append(
            Problem(file, package[0], f"package {package[1]} is not supportgate.org.<name>")
        )
    for index, line in enumerate(lines):
        head = _HEAD.match(line)
        if head is None:
            continue
        where = f"{file}:{index + 1}"
        annotation = _metadata_above(lines, index)
        if annotation is None:
            problems.append(
                Problem(file, index + 1, f"{head['set']} rule without a METADATA block above it")
            )
            continue
        problems += [
            Problem(file, index + 1, message)
            for message in _metadata_problems(annotation, head["set"], where, declared)
        ]
    return problems


def _metadata_above(lines: list[str], head: int) -> dict[str, Any] | None:
    """The METADATA annotation in the comment block right above line `head`, if any."""
    start = head
    while start > 0 and lines[start - 1].startswith("#"):
        start -= 1
    block = lines[start:head]
    if not block or block[0].strip() != "# METADATA":
        return None
    text = "\n".join(line[2:] if line.startswith("# ") else line[1:] for line in block[1:])
    try:
        annotation = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    return annotation if isinstance(annotation, dict) else {}


def _metadata_problems(
    annotation: dict[str, Any], head_set: str, where: str, declared: dict[str, str]
) -> list[str]:
    custom = annotation.get("custom")
    custom = custom if isinstance(custom, dict) else {}
    rule_id = custom.get("id")
    found: list[str] = []
    if not isinstance(rule_id, str) or not rule_id.startswith(ID_PREFIX):
        found.append(
            f"METADATA custom.id must be a rule id starting {ID_PREFIX!r}, got {rule_id!r}"
        )
    if isinstance(rule_id, str) and rule_id in declared:
        found.append(f"rule id {rule_id} is already declared by {declared[rule_id]}")
    elif isinstance(rule_id, str):
        declared[rule_id] = where
    if custom.get("severity") != head_set:
        found.append(
            f"METADATA custom.severity must be {head_set!r} (the set the rule adds to), "
            f"got {custom.get('severity')!r}"
        )
    for key in ("title", "description"):
        if not str(annotation.get(key) or "").strip():
            found.append(f"METADATA has no {key}")
    return found


def _compile_problems(
    builtin: Sequence[tuple[str, str]], bundles: Sequence[OrgBundle], where: dict[str, str]
) -> list[Problem]:
    """Parse every module with regorus, then evaluate the organisation packages once on an
    empty input (regorus resolves functions only when it evaluates)."""
    engine = regorus.Engine()
    for name, text in builtin:
        engine.add_policy(name, text)
    problems: list[Problem] = []
    for bundle in bundles:
        for name, text in bundle.modules:
            try:
                engine.add_policy(name, text)
            except RuntimeError as exc:
                problems.append(_engine_problem(exc, where, name))
    if problems:
        return problems
    try:
        engine.set_input_json("{}")
        engine.eval_query("data.supportgate.org")
    except RuntimeError as exc:
        problems.append(_engine_problem(exc, where, next(iter(where), "?")))
    return problems


def _engine_problem(exc: RuntimeError, where: dict[str, str], module: str) -> Problem:
    text = str(exc).split("\nStack backtrace:")[0]
    at = _ERROR_AT.search(text)
    message = _ERROR_TEXT.search(text)
    file = where.get(at["file"], at["file"]) if at else where.get(module, module)
    return Problem(
        file,
        int(at["line"]) if at else 1,
        f"does not compile: {message['text'].strip() if message else text.strip()}",
    )
