"""scripts/rego_limits.py: Regal's default file, line and rule lengths, on synthetic files that
sit exactly at each limit (pass) and one over it (fail), and its conventions (package and
directory, package imports, rule names), each on a file that breaks it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "rego_limits.py"


def _check(opa_binary: str, *paths: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(opa_binary).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


def _rule(name: str, body_lines: int) -> str:
    """A rule of `body_lines + 2` lines (head and closing brace), each a comment between."""
    uncounted = "\t# a comment Regal does not count\n"
    body = "".join(f"\tinput.a{n} == {n}\n{uncounted}" for n in range(body_lines))
    return f"{name} if {{\n{body}}}\n"


def _module(*rules: str, padding: int = 0) -> str:
    return "package limits\n\n" + "\n".join(rules) + "# padding\n" * padding


def _write(tmp_path: Path, text: str, name: str = "policy.rego", package: str = "limits") -> Path:
    """The file in the directory its package names (directory-package-mismatch)."""
    path = tmp_path.joinpath(*package.split("."), name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _breaches(result: subprocess.CompletedProcess[str]) -> list[str]:
    return result.stdout.splitlines()


def test_files_within_every_limit_pass(opa_binary: str, tmp_path: Path) -> None:
    long_line = "\tinput.value == " + '"' + "x" * (120 - len('\tinput.value == ""')) + '"'
    assert len(long_line) == 120
    url = "# see https://example.com/" + "a" * 101 + " for why"  # one unbreakable word
    text = _module(
        _rule("allow", 28),  # 30 lines of code
        _rule("test_allow", 58),  # 60 lines: the limit for tests
        f"deny if {{\n{long_line}\n}}\n",
        url + "\n",
        "table := {\n" + "".join(f'\t"k{n}": {n},\n' for n in range(40)) + "}\n",  # no body
    )
    lines = text.count("\n") + 1  # Regal counts the text split on newlines
    path = _write(tmp_path, text + "# padding\n" * (500 - lines))
    assert len(path.read_text().split("\n")) == 500

    result = _check(opa_binary, path)

    assert (result.returncode, _breaches(result)) == (0, []), result.stderr


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (_module(padding=498), 1, "file-length: 501 lines, more than 500"),  # 2 + 498 + ""
        (_module(f'x := "{"abcd " * 22}abcd"'), 3, "line-length: 121 characters, more than 120"),
        (_module(_rule("allow", 29)), 3, "rule-length: rule allow has 31 lines, more than 30"),
        (
            _module(_rule("test_allow", 59)),
            3,
            "rule-length: rule test_allow has 61 lines, more than 60",
        ),
        (
            _module("r := 1 if {\n\tinput.a\n} else := 2 if {\n" + "\tinput.b\n" * 27 + "}\n"),
            3,
            "rule-length: rule r has 31 lines, more than 30",
        ),
    ],
    ids=["file", "line", "rule", "test-rule", "else-branches"],
)
def test_each_limit_one_over_is_reported_with_file_and_line(
    opa_binary: str, tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = _write(tmp_path, text)

    result = _check(opa_binary, path)

    assert result.returncode == 1
    assert _breaches(result) == [f"{path}:{line}: {message}"]


def test_directories_are_walked_and_only_the_paths_given_are_checked(
    opa_binary: str, tmp_path: Path
) -> None:
    good = _write(tmp_path, _module(_rule("allow", 3)), "good.rego")
    bad = _write(tmp_path / "nested", _module(_rule("allow", 40)), "bad.rego")

    assert _check(opa_binary, good).returncode == 0
    walked = _check(opa_binary, tmp_path)
    assert walked.returncode == 1
    assert [breach.split(":")[0] for breach in _breaches(walked)] == [str(bad)]


def test_a_file_that_does_not_parse_is_an_error_not_a_pass(opa_binary: str, tmp_path: Path) -> None:
    path = _write(tmp_path, "package broken\n\nallow if {\n")

    result = _check(opa_binary, path)

    assert result.returncode == 2
    assert str(path) in result.stderr


LIBRARY = 'package corp.lib.names\n\nidentity(name) := lower(name)\n\nseparators := {"-", "_"}\n'


def test_files_by_the_conventions_pass(opa_binary: str, tmp_path: Path) -> None:
    _write(tmp_path, LIBRARY, "names.rego", "corp.lib.names")
    _write(
        tmp_path,
        "package corp.lib.names_test\n\nimport data.corp.lib.names\n\n"
        'test_identity if names.identity("A") == "a"\n',
        "names_test.rego",
        "corp.lib.names",  # a test package sits beside what it tests
    )
    _write(
        tmp_path,
        "package corp.gate\n\nimport data.corp.lib.names\nimport data.matrix.engines\n\n"
        "allow if names.identity(input.name) in engines\n\n"
        "pooled if {\n\tpool := input.pools[input.pool]\n\tpool.archs[input.arch]\n}\n\n"
        "listed if {\n\tpools := data.corp.pools\n\tpools[input.pool]\n}\n",
        "gate.rego",
        "corp.gate",
    )

    result = _check(opa_binary, tmp_path)

    assert (result.returncode, _breaches(result)) == (0, []), result.stderr


@pytest.mark.parametrize(
    ("directory", "text", "breach"),
    [
        (
            "corp.other",
            "package corp.gate\n\nallow := true\n",
            "1: directory-package-mismatch: package corp.gate belongs in a directory corp/gate",
        ),
        (
            "corp.gate_test",
            "package corp.gate_test\n\ntest_x if true\n",
            "1: directory-package-mismatch: package corp.gate_test belongs in a directory "
            "corp/gate",
        ),
        (
            "corp.gate",
            "package corp.gate\n\nimport data.corp.lib.names.identity\n\n"
            "allow if identity(input.name)\n",
            "3: prefer-package-imports: import data.corp.lib.names.identity names a rule: "
            "import data.corp.lib.names and write names.identity",
        ),
        (
            "corp.gate",
            "package corp.gate\n\ngate := true\n",
            "3: rule-name-repeats-package: rule gate repeats package corp.gate",
        ),
        (
            "corp.gate",
            "package corp.gate\n\ncorp_gate_allow := true\n",
            "3: rule-name-repeats-package: rule corp_gate_allow repeats package corp.gate",
        ),
        (
            "corp.gate",
            "package corp.gate\n\ncorpGate := true\n",
            "3: rule-name-repeats-package: rule corpGate repeats package corp.gate",
        ),
        (
            "corp.gate",
            "package corp.gate\n\nallow if input.pools[input.pool][input.arch]\n",
            "3: variable-index-chain: input.pools[input.pool][input.arch]",
        ),
        (
            "corp.gate",
            "package corp.gate\n\nallow if input.pools[input.pool].archs[input.arch]\n",
            "3: variable-index-chain: input.pools[input.pool].archs[input.arch]",
        ),
        (
            "corp.gate",
            "package corp.gate\n\nallow if object.union({}, input.pools)[input.pool]\n",
            "3: variable-index-chain: object.union({}, input.pools)[input.pool]",
        ),
        (
            "corp.gate",
            "package corp.gate\n\nallow if data.corp.pools[input.pool]\n",
            "3: data-variable-index: data.corp.pools[input.pool]",
        ),
        (
            "corp.gate",
            "package corp.gate\n\nallow if data.corp.pools[0]\n",
            "3: data-variable-index: data.corp.pools[0]",
        ),
    ],
    ids=[
        "directory",
        "test-directory",
        "rule-import",
        "rule-name",
        "joined-name",
        "camel-name",
        "two-variables",
        "variables-apart",
        "call-indexed",
        "data-indexed",
        "data-numbered",
    ],
)
def test_each_convention_broken_is_reported_with_file_and_line(
    opa_binary: str,
    tmp_path: Path,
    directory: str,
    text: str,
    breach: str,
) -> None:
    _write(tmp_path, LIBRARY, "names.rego", "corp.lib.names")
    path = _write(tmp_path, text, "policy.rego", directory)

    result = _check(opa_binary, tmp_path)

    assert result.returncode == 1
    assert _breaches(result) == [f"{path}:{breach}"]
