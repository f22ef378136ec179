"""`supportgate check` on input the policies cannot judge: exit 2 (not 1, which reads as "the
gate failed"), a message naming the file and the field, and no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from supportgate.cli import main
from tests.examples import EXAMPLES

AT = "2026-11-30T00:00:00Z"
POOL = (EXAMPLES / "hw-h100-pool-a.yaml").read_text()
TRIAL = (EXAMPLES / "dep-h100-port-trial.yaml").read_text()


def _changed(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


def _evidence_at(at: str) -> str:
    doc = yaml.safe_load(TRIAL)
    doc["spec"]["evidence"] = {"build": {"status": "passed", "at": at}}
    return json.dumps(doc)


# name -> (file name, text, field named)
BAD_FILES: dict[str, tuple[str, str, str]] = {
    "integer-of-5000-digits": (
        "pool.yaml",
        _changed(POOL, "nodes: 8", "nodes: " + "9" * 5000),
        "$.spec.nodes",
    ),
    "hex-of-20000-digits": (
        "pool.yaml",
        _changed(POOL, "nodes: 8", "nodes: 0x" + "f" * 20_000),
        "$.spec.nodes",
    ),
    "integer-of-311-digits": (
        "pool.yaml",
        _changed(POOL, "nodes: 8", "nodes: 1" + "0" * 310),
        "$.spec.nodes",
    ),
    "integer-above-2**53": (
        "pool.json",
        json.dumps(yaml.safe_load(POOL)).replace('"nodes": 8', f'"nodes": {2**53}'),
        "$.spec.nodes",
    ),
    "nul-in-text": (
        "pool.yaml",
        _changed(POOL, "name: h100-pool-a", 'name: "a\\0b"'),
        "$.metadata.name",
    ),
    "time-before-1678": (
        "trial.json",
        _evidence_at("1600-01-01T00:00:00Z"),
        "$.spec.evidence.build.at",
    ),
    "time-after-2261": (
        "trial.json",
        _evidence_at("2262-04-12T00:00:00Z"),
        "$.spec.evidence.build.at",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_input_the_policies_cannot_judge_is_exit_2_naming_file_and_field(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, text, field = BAD_FILES[case]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    code = main(["check", "--at", AT, str(path), str(EXAMPLES / "hw-b200-pool.yaml")])
    captured = capsys.readouterr()
    assert code == 2, captured
    assert str(path) in captured.err
    assert field in captured.err
    assert "Traceback" not in captured.err + captured.out


@pytest.mark.parametrize(
    "at",
    [
        "1600-01-01T00:00:00Z",
        "2262-04-12T00:00:00Z",
        "0001-01-01T00:00:00Z",
        "1678-01-01T00:00:00+01:00",  # 1677-12-31T23:00:00Z
    ],
)
def test_an_evaluation_time_the_policies_cannot_compare_is_exit_2(
    at: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--at", at, str(EXAMPLES / "hw-b200-pool.yaml")])
    captured = capsys.readouterr()
    assert code == 2
    assert "--at" in captured.err


def test_the_console_script_prints_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "pool.yaml"
    path.write_text(BAD_FILES["integer-of-5000-digits"][1], encoding="utf-8")
    finished = subprocess.run(
        [str(Path(sys.executable).with_name("supportgate")), "check", str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert finished.returncode == 2, finished.stderr
    assert "Traceback" not in finished.stderr
    assert f"{path}: " in finished.stderr
    assert "$.spec.nodes" in finished.stderr
