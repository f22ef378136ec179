"""`supportgate check` driven as a user would: files in, report out, exit code 0/1/2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from supportgate.cli import main

AT = "2026-11-30T00:00:00Z"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", "--at", AT, *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def examples(directory: Path, *names: str) -> list[str]:
    return [str(directory / name) for name in names]


def test_all_examples_json_matches_expected(
    shared_examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = yaml.safe_load((shared_examples / "expected.yaml").read_text())
    code, out, _ = run(capsys, "--format", "json", *examples(shared_examples, *expected))
    report = json.loads(out)
    assert code == 1
    assert report["gate"] == {"fail_on": "rejected", "passed": False}
    verdicts = {Path(r["source"]).name: r["decision"]["verdict"] for r in report["results"]}
    assert verdicts == {name: want["verdict"] for name, want in expected.items()}


def test_supported_manifests_pass_the_gate(
    shared_examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = examples(shared_examples, "hw-b200-pool.yaml", "dep-b200-offline.yaml")
    code, out, _ = run(capsys, *files)
    assert code == 0
    assert "gate: passed" in out


def test_fail_on_experimental(shared_examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = examples(shared_examples, "hw-h100-pool-a.yaml")
    assert run(capsys, *files)[0] == 0
    assert run(capsys, "--fail-on", "experimental", *files)[0] == 1


def test_hardware_ref_resolves_only_among_given_files(
    shared_examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alone = examples(shared_examples, "dep-h100-port-trial.yaml")
    code, out, _ = run(capsys, "--format", "json", *alone)
    decision = json.loads(out)["results"][0]["decision"]
    assert code == 1
    assert "manifest.hardware-ref" in {v["rule"] for v in decision["violations"]}

    with_pool = examples(shared_examples, "dep-h100-port-trial.yaml", "hw-h100-pool-a.yaml")
    code, out, _ = run(capsys, "--format", "json", *with_pool)
    assert code == 0
    assert [r["decision"]["verdict"] for r in json.loads(out)["results"]] == [
        "experimental",
        "experimental",
    ]


def test_broken_file_is_exit_2_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "apiVersion: supportgate/v1\nkind: HardwareManifest\nmetadata: {name: Bad_Name}\nspec: {}\n"
    )
    code, out, err = run(capsys, str(broken))
    assert code == 2
    assert out == ""
    assert str(broken) in err
    assert "$.metadata.name" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["does-not-exist.yaml"],
        ["--format", "html", "x.yaml"],
        ["--fail-on", "warn", "x.yaml"],
        ["--at", "yesterday", "x.yaml"],
    ],
)
def test_usage_errors_are_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(["check", *argv])
    except SystemExit as exc:
        code = int(exc.code or 0)
    assert code == 2
    assert "supportgate: error:" in capsys.readouterr().err


def test_duplicate_manifest_is_exit_2(
    shared_examples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy.yaml"
    shutil.copy(shared_examples / "hw-b200-pool.yaml", copy)
    code, _, err = run(capsys, str(shared_examples / "hw-b200-pool.yaml"), str(copy))
    assert code == 2
    assert "b200-pool" in err


def test_multi_document_file(
    shared_examples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = tmp_path / "all.yaml"
    bundle.write_text(
        (shared_examples / "hw-b200-pool.yaml").read_text()
        + "---\n"
        + (shared_examples / "dep-b200-offline.yaml").read_text()
    )
    code, out, _ = run(capsys, "--format", "json", str(bundle))
    assert code == 0
    assert [r["decision"]["manifest"]["kind"] for r in json.loads(out)["results"]] == [
        "HardwareManifest",
        "DeploymentManifest",
    ]


def test_sarif_names_rules_from_policy_metadata(
    shared_examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys, "--format", "sarif", *examples(shared_examples, "hw-rtx4090-workstation.yaml")
    )
    rules = {
        rule["id"]: rule["shortDescription"]["text"]
        for rule in json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    }
    assert code == 1
    assert rules["host.compiler"] == "Host compiler"
    assert set(rules) == {"host.compiler", "host.python", "support.platform", "port.consumer-card"}


def test_console_script_is_installed(shared_examples: Path) -> None:
    script = Path(sys.executable).with_name("supportgate")
    finished = subprocess.run(
        [
            str(script),
            "check",
            "--format",
            "github",
            str(shared_examples / "hw-rtx4090-workstation.yaml"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert finished.returncode == 1, finished.stderr
    assert "::error file=" in finished.stdout
    assert "title=host.python" in finished.stdout
