"""scripts/rego_limits.py: Regal's default file, line and rule lengths, on synthetic files that
sit exactly at each limit (pass) and one over it (fail)."""

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


def _write(tmp_path: Path, text: str, name: str = "policy.rego") -> Path:
    path = tmp_path / name
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
    (tmp_path / "nested").mkdir()
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
