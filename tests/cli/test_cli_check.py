"""`supportgate check` driven as a user would: files in, report out, exit code 0/1/2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from supportgate.cli import main
from supportgate.policy.inputs import format_time
from tests.examples import EXAMPLES, expected, report_problems
from tests.report_schemas import github_problems, junit_schema_errors, sarif_schema_errors

AT = "2026-11-30T00:00:00Z"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", "--at", AT, *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def examples(directory: Path, *names: str) -> list[str]:
    return [str(directory / name) for name in names]


def test_all_examples_json_matches_expected(
    examples_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wanted = expected()
    assert format_time(wanted.evaluated_at) == AT
    code, out, _ = run(capsys, "--format", "json", *examples(examples_dir, *wanted.decisions))
    report = json.loads(out)
    assert code == 1
    assert report["gate"] == {"fail_on": "rejected", "status": "failed", "passed": False}
    assert [Path(r["source"]).name for r in report["results"]] == list(wanted.decisions)
    assert report_problems(report["results"], exact=True) == {}


def test_supported_manifests_pass_the_gate(
    examples_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = examples(examples_dir, "hw-b200-pool.yaml", "dep-b200-offline.yaml")
    code, out, _ = run(capsys, *files)
    assert code == 0
    assert "gate: passed" in out


def test_fail_on_experimental(examples_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = examples(examples_dir, "hw-h100-pool-a.yaml")
    assert run(capsys, *files)[0] == 0
    assert run(capsys, "--fail-on", "experimental", *files)[0] == 1


def test_hardware_ref_resolves_only_among_given_files(
    examples_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alone = examples(examples_dir, "dep-h100-port-trial.yaml")
    code, out, _ = run(capsys, "--format", "json", *alone)
    decision = json.loads(out)["results"][0]["decision"]
    assert code == 1
    assert "manifest.hardware-ref" in {v["rule"] for v in decision["violations"]}

    with_pool = examples(examples_dir, "dep-h100-port-trial.yaml", "hw-h100-pool-a.yaml")
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
    assert out.startswith(f"ERROR  {broken}: ")  # the report, on stdout
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
    examples_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy.yaml"
    shutil.copy(examples_dir / "hw-b200-pool.yaml", copy)
    code, _, err = run(capsys, str(examples_dir / "hw-b200-pool.yaml"), str(copy))
    assert code == 2
    assert "b200-pool" in err


def test_multi_document_file(
    examples_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = tmp_path / "all.yaml"
    bundle.write_text(
        (examples_dir / "hw-b200-pool.yaml").read_text()
        + "---\n"
        + (examples_dir / "dep-b200-offline.yaml").read_text()
    )
    code, out, _ = run(capsys, "--format", "json", str(bundle))
    assert code == 0
    assert [r["decision"]["manifest"]["kind"] for r in json.loads(out)["results"]] == [
        "HardwareManifest",
        "DeploymentManifest",
    ]


def test_sarif_names_rules_from_policy_metadata(
    examples_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys, "--format", "sarif", *examples(examples_dir, "hw-rtx4090-workstation.yaml")
    )
    run_ = json.loads(out)["runs"][0]
    rules = {
        rule["id"]: rule["shortDescription"]["text"] for rule in run_["tool"]["driver"]["rules"]
    }
    assert code == 1
    assert rules["host.compiler"] == "Host compiler"
    assert {r["ruleId"] for r in run_["results"]} == {
        "host.compiler",
        "host.python",
        "support.platform",
        "port.consumer-card",
    }


def test_console_script_is_installed(examples_dir: Path) -> None:
    script = Path(sys.executable).with_name("supportgate")
    finished = subprocess.run(
        [
            str(script),
            "check",
            "--format",
            "github",
            str(examples_dir / "hw-rtx4090-workstation.yaml"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert finished.returncode == 1, finished.stderr
    assert "::error file=" in finished.stdout
    assert "title=host.python" in finished.stdout


# --- reports that never leave CI blind (reports.md) -----------------------------------------
# The manifests are written inline: an experimental pool, a supported one, a rejected one.

H100 = """\
apiVersion: supportgate/v1
kind: HardwareManifest
metadata: {name: h100-pool-a, owner: infra}
spec:
  accelerator: {vendor: nvidia, model: H100-SXM5-80GB, arch: sm90, memory_gib: 80, per_node: 8}
  nodes: 8
  interconnect: {scale_up_domain: 8, fabric: nvlink4}
  toolkit: {name: cuda, version: "12.8"}
  driver: "570.86.15"
  os: {name: linux, distribution: ubuntu-22.04, kernel: "5.15.0"}
  compiler: {name: gcc, version: "13.2.0"}
  python: "3.12.3"
"""
B200 = (
    H100.replace("h100-pool-a", "b200-pool")
    .replace("H100-SXM5-80GB", "B200")
    .replace("arch: sm90", "arch: sm100")
    .replace('version: "12.8"', 'version: "13.0.1"')
)
OLD_HOST = H100.replace("h100-pool-a", "old-host").replace('python: "3.12.3"', 'python: "3.10.4"')
BROKEN = (
    "apiVersion: supportgate/v1\nkind: HardwareManifest\nmetadata: {name: Bad_Name}\nspec: {}\n"
)


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`supportgate ARGV`, also when the parser refuses it (SystemExit)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def parse_report(fmt: str, out: str) -> Any:
    if fmt in ("json", "sarif"):
        return json.loads(out)
    if fmt == "junit":
        return ET.fromstring(out)  # noqa: S314 - the XML supportgate just wrote
    return out.splitlines()


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github"])
def test_a_broken_file_beside_a_good_one_is_reported_in_every_format(
    fmt: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "good.yaml", H100)
    write(tmp_path, "broken.yaml", BROKEN)
    code, out, err = run(capsys, "--format", fmt, "good.yaml", "broken.yaml")
    assert code == 2
    assert err.splitlines() == [
        "supportgate: error: broken.yaml: expected a DNS label: at most 63 of a-z, 0-9 and '-', "
        "not starting or ending in '-', got 'Bad_Name' - at `$.metadata.name`",
        *(
            f"supportgate: error: broken.yaml: Object missing required field `{name}` - at "
            f"`$.spec.{name}`"
            for name in ("accelerator", "nodes", "toolkit")
        ),
    ]
    report = parse_report(fmt, out)
    if fmt == "text":
        first = err.splitlines()[0].removeprefix("supportgate: error: ")
        assert report[:2] == [
            f"ERROR  {first} (line 3, column 12)",
            "ERROR  broken.yaml: Object missing required field `accelerator` - at "
            "`$.spec.accelerator` (line 4, column 1)",
        ]
        assert any(
            line.startswith("PASS  good.yaml  HardwareManifest/h100-pool-a") for line in report
        )
    elif fmt == "json":
        assert report["gate"]["status"] == "error"
        assert [(e["field"], e["line"], e["column"]) for e in report["errors"]] == [
            ("$.metadata.name", 3, 12),
            ("$.spec.accelerator", 4, 1),
            ("$.spec.nodes", 4, 1),
            ("$.spec.toolkit", 4, 1),
        ]
        assert {e["source"] for e in report["errors"]} == {"broken.yaml"}
        assert [r["decision"]["verdict"] for r in report["results"]] == ["experimental"]
    elif fmt == "sarif":
        assert sarif_schema_errors(report) == []
        assert github_problems(report) == []
        run_ = report["runs"][0]
        (invocation,) = run_["invocations"]
        assert invocation["executionSuccessful"] is False
        notification, *others = invocation["toolExecutionNotifications"]
        assert len(others) == 3
        location = notification["locations"][0]
        assert location["physicalLocation"]["artifactLocation"]["uri"] == "broken.yaml"
        region = location["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"]) == (3, 12)
        assert location["logicalLocations"] == [{"fullyQualifiedName": "$.metadata.name"}]
        rules = [r["ruleId"] for r in run_["results"]]
        assert rules == ["support.platform", *["check.input-error"] * 4]
    elif fmt == "junit":
        assert junit_schema_errors(out) == []
        assert report.get("errors") == "4"
        broken = report.find("testsuite[@name='broken.yaml']/testcase/error")
        assert broken is not None
        assert "$.metadata.name" in (broken.text or "")
        assert report.find("testsuite[@name='good.yaml']/testcase/skipped") is not None
    else:
        assert report[0].startswith(
            "::error file=broken.yaml,line=3,col=12,title=supportgate%3A input"
        )
        assert report[4].startswith("::warning file=good.yaml,line=")
        assert report[-1].endswith("4 errors; gate: error (fail on rejected)")


@pytest.mark.parametrize(
    "text",
    ["", "# only a comment\n", "---\n---\n", "[]\n"],
    ids=["empty", "comment", "empty-documents", "json-array"],
)
def test_a_file_with_no_manifest_is_exit_2(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "none.json" if text.startswith("[") else "none.yaml"
    path = write(tmp_path, name, text)
    code, out, err = run(capsys, "--format", "json", str(path))
    assert code == 2
    (error,) = json.loads(out)["errors"]
    assert (error["source"], error["field"]) == (str(path), "$")
    assert "holds no manifest" in err


def test_unreadable_and_duplicate_files_are_problems_the_rest_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = write(tmp_path, "a.yaml", H100)
    copy = write(tmp_path, "copy.yaml", H100)
    code, out, _ = run(capsys, "--format", "json", str(first), str(copy), str(tmp_path / "nope"))
    report = json.loads(out)
    assert code == 2
    assert [(e["source"], e["field"]) for e in report["errors"]] == [
        (str(tmp_path / "nope"), None),
        (str(copy), "$.metadata.name"),
    ]
    assert [r["source"] for r in report["results"]] == [str(first)]


def test_sarif_paths_are_relative_to_sarif_root_even_for_absolute_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    inside = write(repo / "manifests", "h100.yaml", H100)
    outside = write(tmp_path / "elsewhere", "b200.yaml", B200)
    monkeypatch.chdir(tmp_path)

    def uris(*argv: str) -> tuple[dict[str, Any], list[dict[str, str]]]:
        code, out, _ = run(capsys, "--format", "sarif", *argv)
        assert code == 0
        run_ = json.loads(out)["runs"][0]
        located = [
            r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run_["results"]
        ]
        return run_["originalUriBaseIds"], located

    bases, located = uris("--sarif-root", str(repo), str(inside), str(outside))
    assert located == [{"uri": "manifests/h100.yaml", "uriBaseId": "%SRCROOT%"}]
    assert bases["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    # relative inputs and a relative root resolve against the working directory
    _, located = uris("--sarif-root", "repo", "repo/manifests/h100.yaml")
    assert located == [{"uri": "manifests/h100.yaml", "uriBaseId": "%SRCROOT%"}]
    # the default root is the working directory
    monkeypatch.chdir(repo)
    _, located = uris(str(inside))
    assert located == [{"uri": "manifests/h100.yaml", "uriBaseId": "%SRCROOT%"}]
    # outside the root there is no relative path: the absolute URI is kept
    h100_elsewhere = write(tmp_path / "elsewhere", "h100.yaml", H100)
    _, located = uris(str(h100_elsewhere))
    assert located == [{"uri": h100_elsewhere.resolve().as_uri()}]


def test_rule_levels_are_the_same_in_runs_with_different_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = []
    for files in (["b200.yaml"], ["h100.yaml", "old.yaml"]):
        paths = [
            str(
                write(
                    tmp_path,
                    name,
                    {"b200.yaml": B200, "h100.yaml": H100, "old.yaml": OLD_HOST}[name],
                )
            )
            for name in files
        ]
        code, out, _ = run(capsys, "--format", "sarif", *paths)
        runs.append((code, json.loads(out)["runs"][0]))
    assert [code for code, _ in runs] == [0, 1]
    assert runs[0][1]["results"] == []
    assert {r["ruleId"] for r in runs[1][1]["results"]} >= {"host.python", "support.platform"}
    rules = [
        [(r["id"], r["defaultConfiguration"]["level"]) for r in run_["tool"]["driver"]["rules"]]
        for _, run_ in runs
    ]
    assert rules[0] == rules[1]
    levels = dict(rules[0])
    assert (levels["host.python"], levels["support.platform"]) == ("error", "warning")
    assert len(levels) == 34 + 1  # every rule of the catalogue, and check.input-error


def test_sarif_and_junit_meet_their_schemas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [
        str(write(tmp_path, n, t))
        for n, t in [("h.yaml", H100), ("b.yaml", B200), ("o.yaml", OLD_HOST)]
    ]
    for fail_on in ("rejected", "experimental"):
        _, sarif_out, _ = run(capsys, "--format", "sarif", "--fail-on", fail_on, *paths)
        assert sarif_schema_errors(json.loads(sarif_out)) == []
        assert github_problems(json.loads(sarif_out)) == []
        _, junit_out, _ = run(capsys, "--format", "junit", "--fail-on", fail_on, *paths)
        assert junit_schema_errors(junit_out) == []
        root = ET.fromstring(junit_out)  # noqa: S314 - the XML supportgate just wrote
        assert all(case.get("time") for case in root.iter("testcase"))
        assert all(suite.get("time") for suite in root.iter("testsuite"))
    # the schema check is no rubber stamp: junit-10.xsd refuses skipped on testsuites
    assert (
        junit_schema_errors(junit_out.replace("<testsuites ", '<testsuites skipped="0" ', 1)) != []
    )


@pytest.mark.parametrize(
    ("argv", "fmt", "names"),
    [
        (["check", "--at", "yesterday"], "sarif", "--at"),
        (["check", "--matrix", "no-such-matrix.yaml"], "json", "--matrix"),
        (["check", "--bogus"], "sarif", "--bogus"),
        (["check", "--fail-on", "warn"], "junit", "--fail-on"),
        (["check", "--server", "ftp://x", "--token", "t"], "github", "--server"),
    ],
    ids=["bad-at", "missing-matrix", "unknown-flag", "bad-choice", "bad-server"],
)
def test_bad_options_still_write_the_report(
    argv: list[str],
    fmt: str,
    names: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    good = write(tmp_path, "h.yaml", H100)
    code, out, err = run_cli(capsys, *argv, "--format", fmt, str(good))
    assert code == 2
    assert names in err
    assert names in out
    report = parse_report(fmt, out)
    if fmt == "sarif":
        assert report["runs"][0]["invocations"][0]["executionSuccessful"] is False
        assert sarif_schema_errors(report) == []
    elif fmt == "junit":
        assert junit_schema_errors(out) == []
        assert report.get("errors") == "1"
    elif fmt == "json":
        assert report["gate"]["status"] == "error"
    else:
        assert report[0].startswith("::error title=supportgate%3A input error::")


def test_output_file_holds_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, "h.yaml", H100)
    target = tmp_path / "report.sarif"
    code, out, _ = run(capsys, "--format", "sarif", "--output", str(target), str(good))
    assert (code, out) == (0, "")
    assert json.loads(target.read_text())["runs"][0]["results"][0]["ruleId"] == "support.platform"
    # an --output that cannot be written: the report, with that problem, goes to stdout
    missing_dir = tmp_path / "no" / "such" / "dir.json"
    code, out, err = run(capsys, "--format", "json", "--output", str(missing_dir), str(good))
    assert code == 2
    assert json.loads(out)["errors"][0]["field"] == "--output"
    assert "--output: cannot write" in err


def test_console_script_writes_sarif_for_a_broken_file(tmp_path: Path) -> None:
    broken = write(tmp_path, "broken.yaml", BROKEN)
    finished = subprocess.run(
        [
            str(Path(sys.executable).with_name("supportgate")),
            "check",
            "--format",
            "sarif",
            str(broken),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert finished.returncode == 2
    log = json.loads(finished.stdout)
    assert sarif_schema_errors(log) == []
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is False
    assert "$.metadata.name" in finished.stderr


def test_a_refused_command_line_writes_a_report_only_for_an_explicit_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = str(write(tmp_path, "h.yaml", H100))
    code, out, err = run_cli(capsys, "check", "--bogus", good)
    assert (code, out) == (2, "")  # text by default: stderr is the report
    assert "unrecognized arguments: --bogus" in err
    target = tmp_path / "refused.json"
    code, out, _ = run_cli(capsys, "check", "--format=json", f"--output={target}", "--bogus", good)
    assert (code, out) == (2, "")
    (error,) = json.loads(target.read_text())["errors"]
    assert error["message"] == "the command line was refused: unrecognized arguments: --bogus"
    code, out, _ = run_cli(capsys, "check", "--format", "xml", "--bogus", good)
    assert (code, out) == (2, "")


def test_a_broken_document_of_several_names_the_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stream = write(tmp_path, "pools.yaml", H100 + "---\n" + BROKEN)
    code, out, _ = run(capsys, "--format", "json", str(stream))
    error, *missing = json.loads(out)["errors"]
    assert code == 2
    second = H100.count("\n") + 2  # after the first document and the `---`
    assert (error["source"], error["field"], error["line"]) == (
        str(stream),
        "$.metadata.name",
        second + 2,
    )
    assert error["message"].startswith(f"{stream}, document 2: ")
    assert [e["line"] for e in missing] == [second + 3] * 3


def test_a_yaml_syntax_error_is_placed_where_its_message_says_in_every_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(
        tmp_path, "syntax.yaml", "apiVersion: supportgate/v1\nkind: [HardwareManifest\nspec: {}\n"
    )
    reports = {
        fmt: run(capsys, "--format", fmt, "syntax.yaml")[1]
        for fmt in ("json", "sarif", "github", "text", "junit")
    }
    [error] = json.loads(reports["json"])["errors"]
    line, column = error["line"], error["column"]
    assert f"(line {line}, column {column})" in error["message"]
    assert line == 3  # where the parser found no `]`
    [result] = json.loads(reports["sarif"])["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (line, column)
    assert reports["github"].startswith(f"::error file=syntax.yaml,line={line},col={column},")
    assert f"line {line}, column {column}" in reports["text"]
    assert f"line {line}, column {column}" in reports["junit"]


KUBERNETES = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
HELM_TEMPLATE = "replicas: {{ .Values.replicas }}\n"  # not even YAML


def test_supportgate_only_passes_over_other_documents_and_lists_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "k8s.yaml", KUBERNETES)
    write(tmp_path, "chart.yaml", HELM_TEMPLATE)
    write(tmp_path, "mixed.yaml", KUBERNETES + "---\n" + H100)
    names = ["k8s.yaml", "chart.yaml", "mixed.yaml"]
    code, out, err = run(capsys, "--supportgate-only", *names)
    assert (code, err) == (0, "")
    assert out.splitlines()[:3] == [
        "SKIP  k8s.yaml: not a supportgate/v1 document",
        "SKIP  chart.yaml: not a supportgate/v1 document",
        "SKIP  mixed.yaml, document 1: not a supportgate/v1 document",
    ]
    assert "mixed.yaml  HardwareManifest/h100-pool-a  verdict=experimental" in out
    assert run(capsys, *names)[0] == 2  # without the flag, they are input errors


def _repository(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        write(root / Path(name).parent, Path(name).name, text)
    subprocess.run(["git", "init", "--quiet"], cwd=root, check=True)  # noqa: S607 - git from PATH
    subprocess.run(["git", "add", "--all"], cwd=root, check=True)  # noqa: S607


def test_find_hardware_uses_the_repositorys_pools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    deployment = (EXAMPLES / "dep-h100-port-trial.yaml").read_text()
    _repository(
        tmp_path, {"infra/pools.yaml": KUBERNETES + "---\n" + H100, "deploy/trial.yaml": deployment}
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "--format", "json", "--find-hardware", "deploy/trial.yaml")
    assert code == 0, err
    [result] = json.loads(out)["results"]  # the pool judged the deployment, not reported
    rules = {violation["rule"] for violation in result["decision"]["violations"]}
    assert "manifest.hardware-ref" not in rules


def test_find_hardware_makes_a_ref_found_nowhere_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    deployment = (EXAMPLES / "dep-h100-port-trial.yaml").read_text()
    _repository(tmp_path, {"deploy/trial.yaml": deployment, "k8s.yaml": KUBERNETES})
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "--format", "json", "--find-hardware", "deploy/trial.yaml")
    assert code == 2
    [error] = json.loads(out)["errors"]
    assert error["field"] == "$.spec.hardware.ref"
    assert "'h100-pool-a'" in error["message"]
    assert f"the 2 YAML and JSON files git tracks under {tmp_path}" in error["message"]
    assert json.loads(out)["results"] == []


def test_reports_are_written_beside_the_main_one_and_the_summary_explains_each_finding(
    examples_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary, sarif = tmp_path / "summary.md", tmp_path / "report.sarif"
    files = [str(path) for path in expected().files]
    code, out, _ = run(
        capsys,
        "--format",
        "json",
        "--report",
        f"markdown={summary}",
        "--report",
        f"sarif={sarif}",
        *files,
    )
    assert code == 1
    assert sarif_schema_errors(json.loads(sarif.read_text())) == []
    markdown = summary.read_text()
    assert markdown.startswith("## ❌ supportgate: gate failed\n")
    for result in json.loads(out)["results"]:
        decision = result["decision"]
        manifest = f"{decision['manifest']['kind']}/{decision['manifest']['name']}"
        assert f"| {decision['verdict']} | `{manifest}` |" in markdown
        for violation in decision["violations"]:
            message = " ".join(violation["message"].split()).replace("|", "\\|")
            severity, rule, path = violation["severity"], violation["rule"], violation["path"]
            assert f"| {severity} | `{rule}` | {message} | `{path}` |" in markdown


def test_a_report_that_cannot_be_written_is_an_input_error(
    examples_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nowhere = tmp_path / "missing" / "summary.md"
    code, _out, err = run(
        capsys, "--report", f"markdown={nowhere}", str(examples_dir / "hw-b200-pool.yaml")
    )
    assert code == 2
    assert f"--report: cannot write {nowhere}" in err
    assert run_cli(capsys, "check", "--report", "pdf=x", "a.yaml")[0] == 2


def test_a_matrix_that_does_not_validate_is_a_problem_in_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path, "h.yaml", H100)
    matrix = write(tmp_path, "m.yaml", "version: 1.0\nengines: {}\n")
    code, out, _ = run(capsys, "--format", "json", "--matrix", str(matrix), str(good))
    assert code == 2
    [error] = json.loads(out)["errors"]
    assert (error["source"], error["field"]) == (str(matrix), "$.evidence_max_age_days")
