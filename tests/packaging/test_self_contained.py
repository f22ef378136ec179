"""Nothing in the repository refers to a path outside it: a fresh clone is all a user has.

Every text file git knows of (tracked, or new and not ignored) is checked for:
- the names of files its authors keep beside the repository, never in it (the product
  contract, the domain notes, the house style, the shared examples), unless the repository
  now holds a file of that name;
- `Path(__file__)` climbs in Python code (`.parents[N]`, `.parent`, then `/ "literal"`
  parts) and `dirname(...__file__)` nests, read from the syntax tree and resolved from the
  file's own place: they must stay inside;
- `..` path segments in scripts, Markdown and configuration (a link, `$(dirname "$0")/..`, a
  command's argument), resolved from the file's directory: they must stay inside too;
- absolute paths into the directory that holds the checkout (`<parent>/shared/...`);
- symbolic links whose target is outside.
Python strings are not searched for `..` (tests hand the service such paths on purpose);
Python reaches files through `Path(__file__)`, which is resolved instead.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[2]

WORKSPACE_NAMES = ("CONTRACT.md", "DOMAIN.md", "STYLE.md", "shared/examples")
"""Files beside the repository in its authors' workspace; a reference to one is an escape."""

_CHECKED_FOR_CLIMBS = {".md", ".sh", ".yml", ".yaml", ".toml", ".ini", ".cfg", ".txt"}
_CHECKED_NAMES = {"Dockerfile", "Makefile", ".dockerignore", ".gitignore"}

_PATH_CALLS = {"dirname", "abspath", "realpath"}
_CLIMB = re.compile(r"(?<![\w.])\.\.(?![\w.])")
_TOKEN_END = set(" \t\"'`()<>[]{},;=|&@")


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _inside(path: Path) -> bool:
    return Path(os.path.normpath(path)).is_relative_to(ROOT)


def _workspace_names(text: str, known: set[str]) -> list[tuple[int, str]]:
    found = []
    for name in WORKSPACE_NAMES:
        if any(path == name or path.endswith("/" + name) for path in known):
            continue  # the repository holds such a file now: the name may mean it
        for match in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
            found.append(
                (_line(text, match.start()), f"names {name}, which is not in the repository")
            )
    return found


def _name(node: ast.expr) -> str | None:
    """The name a call is made by: `Path(...)`, `pathlib.Path(...)`, `os.path.dirname(...)`."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _climb_from_file(node: ast.AST, parents: dict[ast.AST, ast.AST], path: Path) -> Path:
    """Where the expression around `Path(__file__)` (the call `node`) points: `.resolve()`,
    `.parent`, `.parents[N]`, then `/ "literal"` parts, as far as they go."""
    target = path
    while (up := parents.get(node)) is not None:
        if isinstance(up, ast.Attribute) and up.attr == "parent":
            target = target.parent
        elif isinstance(up, ast.Attribute) and up.attr in {"resolve", "absolute"}:
            call = parents.get(up)
            if not isinstance(call, ast.Call):
                break
            up = call
        elif isinstance(up, ast.Attribute) and up.attr == "parents":
            index = parents.get(up)
            if not (
                isinstance(index, ast.Subscript)
                and isinstance(index.slice, ast.Constant)
                and isinstance(index.slice.value, int)
            ):
                break
            target, up = target.parents[index.slice.value], index
        elif (
            isinstance(up, ast.BinOp)
            and isinstance(up.op, ast.Div)
            and up.left is node
            and isinstance(up.right, ast.Constant)
            and isinstance(up.right.value, str)
        ):
            target = target / up.right.value
        else:
            break
        node = up
    return target


def _dirnames_from_file(node: ast.AST, parents: dict[ast.AST, ast.AST], path: Path) -> Path:
    """Where `os.path.dirname(os.path.abspath(__file__))` and the like point."""
    target = path
    while isinstance(call := parents.get(node), ast.Call) and _name(call.func) in _PATH_CALLS:
        if _name(call.func) == "dirname":
            target = target.parent
        node = call
    return target


def _python_climbs(path: Path, text: str) -> list[tuple[int, str]]:
    """`Path(__file__)...` and `dirname(...__file__)` expressions, resolved from `path`."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []  # not Python after all; the test suite's own collection reports real ones
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == "__file__"):
            continue
        call = parents.get(node)
        if isinstance(call, ast.Call) and _name(call.func) == "Path":
            target = _climb_from_file(call, parents, path)
        else:
            target = _dirnames_from_file(node, parents, path)
        if not _inside(target):
            found.append((node.lineno, f"a path from __file__ leaves the repository: {target}"))
    return found


def _token_around(text: str, start: int, end: int) -> tuple[str, bool]:
    """The path token holding text[start:end], and whether it follows a `$(...)` (a command
    substitution such as `$(dirname "$0")`, taken as the file's own directory)."""
    left = start
    while left > 0 and text[left - 1] not in _TOKEN_END and text[left - 1] != "\n":
        left -= 1
    right = end
    while right < len(text) and text[right] not in _TOKEN_END and text[right] != "\n":
        right += 1
    return text[left:right], left > 0 and text[left - 1] == ")"


def _relative_climbs(path: Path, text: str, *, in_shell: bool) -> list[tuple[int, str]]:
    found = []
    for match in _CLIMB.finditer(text):
        token, after_substitution = _token_around(text, match.start(), match.end())
        if token.startswith("/") and not after_substitution:
            continue  # an absolute path: checked by _absolute_paths
        if "/" not in token and not in_shell:
            continue  # a lone `..` in prose; in a script it is `cd ..`
        target = path.parent / token.lstrip("/")
        if not _inside(target):
            found.append((_line(text, match.start()), f"{token!r} climbs out of the repository"))
    return found


def _absolute_paths(text: str) -> list[tuple[int, str]]:
    """Absolute paths to real places beside the checkout (a folder of notes next to the
    checkout). Only places that exist count: in a checkout under a scratch directory such
    as /tmp, a container path like the Dockerfile's `/tmp/dist` is not a place on this host."""
    beside = ROOT.parent
    if len(beside.parts) < 2:  # a checkout at /repo: every absolute path is "beside" it
        return []
    pattern = re.compile(rf"{re.escape(str(beside))}/[\w.-]+")
    return [
        (_line(text, match.start()), f"{match[0]!r} is an absolute path beside the checkout")
        for match in pattern.finditer(text)
        if not _inside(Path(match[0])) and Path(match[0]).exists()
    ]


def escapes(path: Path, text: str, known: set[str], *, names: bool = True) -> list[str]:
    """Every reference in `text` (the file at `path`) to a place outside the repository;
    `known`: the repository's file paths, relative to ROOT; `names`: look for WORKSPACE_NAMES
    too."""
    found = _absolute_paths(text) + (_workspace_names(text, known) if names else [])
    if path.suffix == ".py":
        found += _python_climbs(path, text)
    elif path.suffix in _CHECKED_FOR_CLIMBS or path.name in _CHECKED_NAMES:
        found += _relative_climbs(path, text, in_shell=path.suffix == ".sh")
    elif text.startswith("#!") or path.parent.name == "scripts":
        found += _relative_climbs(path, text, in_shell=True)
    return [f"{path.relative_to(ROOT)}:{line}: {reason}" for line, reason in sorted(found)]


def repository_files() -> list[str]:
    """Tracked files and new ones git does not ignore, relative to ROOT."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],  # noqa: S607
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted({name for name in listed.split("\0") if name})


def _text(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_no_file_refers_to_a_path_outside_the_repository() -> None:
    names = repository_files()
    assert "README.md" in names, f"git lists no files under {ROOT}"
    known = set(names)
    found: list[str] = []
    for name in names:
        path = ROOT / name
        if path.is_symlink():
            if not _inside(path.parent / os.readlink(path)):
                found.append(f"{name}: a symbolic link to {os.readlink(path)}, outside")
            continue
        if not path.is_file():
            continue  # deleted in the work tree
        text = _text(path)
        if text is not None:  # this file names what it looks for
            found += escapes(path, text, known, names=path != Path(__file__).resolve())
    assert found == [], "\n".join(found)


# The checks on their own: what they must find and what they must leave alone.
BESIDE = "../" + Path(WORKSPACE_NAMES[-1]).parts[0]
"""The workspace directory beside a checkout, made from the name the checks look for, so
that the repository never spells a path outside itself, not even in this test's inputs."""
ESCAPING = [
    ("README.md", f"The contract is `{BESIDE}/CONTRACT.md`."),
    ("README.md", f"supportgate check {BESIDE}/examples/hw-*.yaml"),
    ("README.md", f"curl --data-binary @{BESIDE}/examples/hw-h100-pool-a.yaml"),
    ("docs/tour.md", "see [the domain](../../notes/domain.md)"),
    ("scripts/serve", 'cd "$(dirname "$0")/../.."'),
    ("tests/audit/support.py", 'EXAMPLES = Path(__file__).resolve().parents[3] / "x"'),
    ("tests/conftest.py", "ROOT = Path(__file__).parent.parent.parent"),
    ("bench/common.py", 'DATA = Path(__file__).resolve().parents[1] / ".." / "data"'),
    ("bench/common.py", "HERE = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))"),
    ("policies/x/x.rego", "# The three claims kept apart (DOMAIN.md): a build proves"),
    ("scripts/test", "cd ../.. && ls"),
]
STAYING = [
    ("docs/tour.md", "see [the README](../README.md) and [waivers](waivers.md)"),
    ("scripts/lib.sh", 'ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"'),
    ("tests/browser/screenshots.py", 'OUT = Path(__file__).resolve().parents[2] / "docs"'),
    ("tests/manifests/test_x.py", 'FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"'),
    ("supportgate/config.py", 'POLICIES = Path(__file__).resolve().parent.parent / "policies"'),
    ("tests/manifests/test_x.py", 'bad = "../../etc/passwd"  # input the service must refuse'),
    ("supportgate/x.py", 'summary = "poll GET .../{id}"'),
    ("README.md", "ranges are `min <= v < below`... and so on .. then"),
    ("README.md", "the support matrix is the contract between teams (docs/manifests.md)"),
]


@pytest.mark.parametrize(("name", "text"), ESCAPING)
def test_a_reference_outside_is_found(name: str, text: str) -> None:
    assert escapes(ROOT / name, text, {"README.md"}) != []


@pytest.mark.parametrize(("name", "text"), STAYING)
def test_a_reference_inside_is_left_alone(name: str, text: str) -> None:
    assert escapes(ROOT / name, text, {"README.md"}) == []


def test_a_name_the_repository_now_holds_is_left_alone() -> None:
    text = "The house style is in STYLE.md."
    assert escapes(ROOT / "README.md", text, {"README.md", "docs/STYLE.md"}) == []


def test_an_absolute_path_to_a_real_place_beside_the_checkout_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "main"
    (tmp_path / "notes").mkdir()
    checkout.mkdir()
    monkeypatch.setattr(sys.modules[__name__], "ROOT", checkout)
    text = f"read {tmp_path}/notes/domain.md; the image builds into {tmp_path}/dist"
    assert [reason for _, reason in _absolute_paths(text)] == [
        f"'{tmp_path}/notes' is an absolute path beside the checkout"
    ]
