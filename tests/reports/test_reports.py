"""The `supportgate check` report formats, rendered from Decisions built by hand (no I/O)."""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest

import supportgate
from supportgate.manifests.decision import (
    Checklist,
    Claims,
    Decision,
    ManifestRef,
    Severity,
    Verdict,
    Violation,
)
from supportgate.manifests.locate import locate
from supportgate.policy.catalog import RuleInfo
from supportgate.reports import (
    FORMATS,
    CheckedManifest,
    Problem,
    Report,
    SarifOptions,
    gate_failed,
    render,
)
from supportgate.reports.github import escape_data, escape_property
from supportgate.reports.rules import rule_anchor, rule_help_uri
from supportgate.reports.sarif import artifact_location, fingerprint
from tests.report_schemas import github_problems, sarif_schema_errors

pytestmark = pytest.mark.fast

DEPLOYMENT_YAML = """\
# a port trial that went to production too early
apiVersion: supportgate/v1
kind: DeploymentManifest
metadata:
  name: v41-flash-h100-prod
  owner: ml-platform
  labels: {app.kubernetes.io/name: flash}
spec:
  hardware: {ref: h100-pool-a}
  engine: {name: deepinfer, version: "1.0.0"}
  model: {name: DeepSeek-V4.1-Flash, quantization: fp8}
  stage: production
  mode: online
  topology: {prefill_gpus: 4, decode_gpus: 60}
  service:
    kv_cache:
      source: missing
    api_compatibility: {source: external, provider: deepseek-recipe}
  port:
    production_stack_unchanged: true
    isolated_branch: false
    pinned:
      engine: "1.0.0"
  evidence:
    build: {status: passed, at: "2026-11-20T10:00:00Z"}
    extra:
      - {status: passed}
      - {status: failed}
"""

HARDWARE_YAML = """\
apiVersion: supportgate/v1
kind: HardwareManifest
metadata: {name: b200-pool}
spec:
  accelerator: {vendor: nvidia, model: B200, arch: sm100, memory_gib: 180, per_node: 8}
  nodes: 4
---
apiVersion: supportgate/v1
kind: HardwareManifest
metadata: {name: h100-pool-a}
spec:
  accelerator: {vendor: nvidia, model: H100-SXM5-80GB, arch: sm90, memory_gib: 80, per_node: 8}
  nodes: 8
"""

DEPLOYMENT_SOURCE = "deploy/v41-flash-h100-prod.yaml"
HARDWARE_SOURCE = "hardware/pools.yaml"


def line_of(text: str, needle: str, start: int = 1) -> int:
    """An independent oracle: the 1-based line of the first line at or after `start` holding
    `needle`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if number >= start and needle in line:
            return number
    raise AssertionError(f"{needle!r} not in text")


def violation(
    rule: str, severity: Severity, path: str, message: str, waiver_id: str | None = None
) -> Violation:
    return Violation(rule=rule, severity=severity, message=message, path=path, waiver_id=waiver_id)


def decision(
    kind: str, name: str, verdict: Verdict, violations: tuple[Violation, ...] = ()
) -> Decision:
    unlisted = verdict != "supported"
    return Decision(
        id=f"dec-{name}",
        manifest=msgspec.convert({"kind": kind, "name": name}, ManifestRef),
        verdict=verdict,
        allowed=verdict != "rejected",
        violations=tuple(sorted(violations, key=Violation.sort_key)),
        claims=Claims(builds="proven", correct="unproven", performant="unproven"),
        checklist=Checklist(
            official_support=not unlisted,
            kernels_and_correctness="unproven",
            distributed_performance="unproven",
            service_completeness="incomplete" if kind == "DeploymentManifest" else "not-applicable",
        ),
        recommendations=("vllm documents nvidia/sm90",) if unlisted else (),
        matrix_version="2026.11.1",
        policy_revision="rev-1",
        input_digest="sha256:" + "ab" * 32,
        evaluated_at=datetime(2026, 11, 30, tzinfo=UTC),
        cause="submission",
    )


REJECTED = decision(
    "DeploymentManifest",
    "v41-flash-h100-prod",
    "rejected",
    (
        violation(
            "port.production",
            "deny",
            "spec.stage",
            "stage production on unlisted nvidia/sm90 needs every evidence item <passed> & fresh",
        ),
        violation(
            "service.kv_cache",
            "deny",
            "spec.service.kv_cache",
            "online mode: kv_cache source is missing\r\nadd a provider",
        ),
        violation(
            "port.isolation",
            "waived",
            "spec.port.isolated_branch",
            "the port is not on an isolated branch",
            waiver_id="w-12",
        ),
        violation("service.external", "warn", "spec.service", "external: 100% of components, a, b"),
        violation(
            "claims.performance",
            "warn",
            "spec.evidence.performance",
            "performance on nvidia/sm90 is unproven",
        ),
        violation("support.platform", "warn", "spec.hardware.ref", "nvidia/sm90 is not listed"),
    ),
)
SUPPORTED = decision("HardwareManifest", "b200-pool", "supported")
EXPERIMENTAL = decision(
    "HardwareManifest",
    "h100-pool-a",
    "experimental",
    (violation("support.platform", "warn", "spec.accelerator", "nvidia/sm90 is not listed"),),
)

RESULTS = (
    CheckedManifest(DEPLOYMENT_SOURCE, REJECTED, DEPLOYMENT_YAML),
    CheckedManifest(HARDWARE_SOURCE, SUPPORTED, HARDWARE_YAML, 0),
    CheckedManifest(HARDWARE_SOURCE, EXPERIMENTAL, HARDWARE_YAML, 1),
)
CLEAN = (CheckedManifest(HARDWARE_SOURCE, SUPPORTED, HARDWARE_YAML),)


# --- the gate --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "fail_on", "failed"),
    [
        ("rejected", "rejected", True),
        ("rejected", "experimental", True),
        ("experimental", "rejected", False),
        ("experimental", "experimental", True),
        ("supported", "rejected", False),
        ("supported", "experimental", False),
    ],
)
def test_gate_failed(verdict: Verdict, fail_on: Any, failed: bool) -> None:
    assert gate_failed(decision("HardwareManifest", "pool", verdict), fail_on) is failed


def test_the_formats() -> None:
    """The parser refuses any other `--format` or `--fail-on` (tests/cli/test_cli_check.py)."""
    assert FORMATS == ("text", "json", "sarif", "junit", "github", "markdown")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_deterministic_and_ends_in_a_newline(fmt: str) -> None:
    first = render(Report(RESULTS), fmt)
    assert first == render(Report(RESULTS), fmt)
    assert first.endswith("\n")
    assert not first.endswith("\n\n")


# --- locate ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("spec.stage", "stage: production"),
        ("spec.hardware.ref", "hardware: {ref"),  # a key inside a flow mapping
        ("spec.service.kv_cache", "kv_cache:"),
        ("spec.service.kv_cache.source", "source: missing"),
        ("spec.port.pinned.engine", 'engine: "1.0.0"'),
        ("spec.evidence.build", "build: {status"),
        ("spec.evidence.extra.1", "{status: failed}"),
        ("spec.evidence.extra[1].status", "{status: failed}"),
        ("$.spec.mode", "mode: online"),
        ("metadata.labels.app.kubernetes.io/name", "labels:"),  # a key holding dots
        # missing paths fall back to the nearest existing ancestor
        ("spec.evidence.performance", "evidence:"),
        ("spec.service.pd_orchestration", "service:"),
        ("spec.port.pinned.toolkit", "pinned:"),
        ("spec.evidence.extra.7", "extra:"),
        ("spec.stage.deeper", "stage: production"),
        ("spec.nothing.here", "spec:"),
        ("status.nothing", "apiVersion:"),  # the document itself, past the leading comment
    ],
)
def test_locate_yaml(path: str, needle: str) -> None:
    assert locate(DEPLOYMENT_YAML, path) == line_of(DEPLOYMENT_YAML, needle)


def test_locate_picks_the_document() -> None:
    second = line_of(HARDWARE_YAML, "---")
    assert locate(HARDWARE_YAML, "spec.accelerator", 0) == line_of(HARDWARE_YAML, "accelerator:")
    assert locate(HARDWARE_YAML, "spec.accelerator", 1) == line_of(
        HARDWARE_YAML, "accelerator:", start=second
    )
    assert locate(HARDWARE_YAML, "metadata.name", 1) == line_of(
        HARDWARE_YAML, "h100-pool-a", start=second
    )
    assert locate(HARDWARE_YAML, "spec", 2) is None


def test_locate_json_including_tab_indentation() -> None:
    text = (
        '{\n\t"kind": "HardwareManifest",\n\t"spec": {\n'
        '\t\t"nodes": 8,\n\t\t"os": {"name": "linux"}\n\t}\n}\n'
    )
    assert locate(text, "spec.nodes") == 4
    assert locate(text, "spec.os.name") == 5
    assert locate(text, "spec.python") == 3
    assert locate('{"spec":{"nodes":8}}', "spec.nodes") == 1


@pytest.mark.parametrize(
    "text", [None, "", "spec: [unclosed\n", "a: 1\n\tb: 2\n", "key: value\n---\n- [\n"]
)
def test_locate_gives_none_without_a_usable_document(text: str | None) -> None:
    assert locate(text, "spec.stage", 1 if text and "---" in text else 0) is None


# --- text ------------------------------------------------------------------------------------


def test_text_blocks_order_and_summary() -> None:
    out = render(Report(RESULTS), "text")
    lines = out.splitlines()
    headers = [line for line in lines if line.startswith(("PASS", "FAIL"))]
    assert [h.split()[:4] for h in headers] == [
        ["FAIL", DEPLOYMENT_SOURCE, "DeploymentManifest/v41-flash-h100-prod", "verdict=rejected"],
        ["PASS", HARDWARE_SOURCE, "HardwareManifest/b200-pool", "verdict=supported"],
        ["PASS", HARDWARE_SOURCE, "HardwareManifest/h100-pool-a", "verdict=experimental"],
    ]
    # aligned: every header's columns start at the same offsets
    assert len({h.index("verdict=") for h in headers}) == 1
    assert len({h.index("HardwareManifest") for h in headers[1:]}) == 1

    first_block = lines[1 : lines.index(headers[1])]
    severities = [line.split()[0] for line in first_block if not line.startswith(" " * 8)]
    assert severities == ["deny", "deny", "waived", "warn", "warn", "warn"]
    assert all(line.startswith("  ") for line in first_block)
    rules = [line.split()[1] for line in first_block if not line.startswith(" " * 8)]
    assert rules[:3] == ["port.production", "service.kv_cache", "port.isolation"]
    assert len({line.index(line.split()[2]) for line in first_block if line[2] != " "}) == 1
    assert "  spec.port.isolated_branch: the port is not on an isolated branch (waiver w-12)" in out
    # a multi-line message continues indented under itself, inside the block
    continuation = first_block[
        first_block.index(next(x for x in first_block if "kv_cache:" in x)) + 1
    ]
    assert continuation.strip() == "add a provider"
    assert continuation.startswith(" " * 8)

    assert lines[-1] == (
        "3 manifests: 1 supported, 1 experimental, 1 rejected; gate: failed (fail on rejected)"
    )
    assert "\x1b" not in out


def test_text_experimental_fails_only_on_experimental() -> None:
    passing = render(Report(RESULTS[1:]), "text")
    failing = render(Report(RESULTS[1:], fail_on="experimental"), "text")
    assert passing.splitlines()[-1].endswith("gate: passed (fail on rejected)")
    assert failing.splitlines()[-1].endswith("gate: failed (fail on experimental)")
    assert (
        "FAIL  hardware/pools.yaml  HardwareManifest/h100-pool-a  verdict=experimental" in failing
    )
    assert "PASS  hardware/pools.yaml  HardwareManifest/b200-pool    verdict=supported" in failing


def test_text_escapes_terminal_control_characters() -> None:
    sneaky = decision(
        "HardwareManifest",
        "pool",
        "experimental",
        (violation("support.platform", "warn", "spec.accelerator", "red \x1b[31mALERT\x07"),),
    )
    out = render(Report([CheckedManifest("a.yaml", sneaky, None)]), "text")
    assert "\x1b" not in out
    assert "\x07" not in out
    assert "red \\x1b[31mALERT\\x07" in out


# --- json ------------------------------------------------------------------------------------


def test_json_document() -> None:
    document = json.loads(render(Report(RESULTS), "json"))
    assert list(document) == ["gate", "errors", "results"]
    assert document["gate"] == {"fail_on": "rejected", "status": "failed", "passed": False}
    assert document["errors"] == []
    assert [r["source"] for r in document["results"]] == [
        DEPLOYMENT_SOURCE,
        HARDWARE_SOURCE,
        HARDWARE_SOURCE,
    ]
    assert [r["passed"] for r in document["results"]] == [False, True, True]
    assert list(document["results"][0]) == ["source", "passed", "decision"]
    decoded = [msgspec.convert(r["decision"], Decision) for r in document["results"]]
    assert decoded == [REJECTED, SUPPORTED, EXPERIMENTAL]
    assert document["results"][0]["decision"]["evaluated_at"] == "2026-11-30T00:00:00Z"


def test_json_gate_follows_fail_on() -> None:
    lenient = json.loads(render(Report(RESULTS[1:]), "json"))
    strict = json.loads(render(Report(RESULTS[1:], fail_on="experimental"), "json"))
    assert lenient["gate"] == {"fail_on": "rejected", "status": "passed", "passed": True}
    assert strict["gate"] == {"fail_on": "experimental", "status": "failed", "passed": False}
    assert [r["passed"] for r in strict["results"]] == [True, False]


# --- sarif -----------------------------------------------------------------------------------


def sarif(results: Any) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(render(Report(results), "sarif"))
    return log


def test_sarif_log_tool_and_rules() -> None:
    log = sarif(RESULTS)
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "supportgate"
    assert driver["version"] == supportgate.__version__

    rules = driver["rules"]
    ids = [rule["id"] for rule in rules]
    # no catalogue given: the input-error rule, then the rules the decisions name, sorted
    assert ids == [
        "check.input-error",
        *sorted(
            {
                "port.production",
                "service.kv_cache",
                "port.isolation",
                "service.external",
                "claims.performance",
                "support.platform",
            }
        ),
    ]
    levels = {rule["id"]: rule["defaultConfiguration"]["level"] for rule in rules}
    assert levels == {
        "check.input-error": "error",
        "claims.performance": "warning",
        "port.isolation": "error",  # a waived deny is a note on the result, not on the rule
        "port.production": "error",
        "service.external": "warning",
        "service.kv_cache": "error",
        "support.platform": "warning",
    }
    assert all(rule["shortDescription"]["text"] for rule in rules)


def test_sarif_results_point_at_their_rules_and_lines() -> None:
    run = sarif(RESULTS)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert len(results) == len(REJECTED.violations) + len(EXPERIMENTAL.violations) == 7
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        expected = {"deny": "error", "warn": "warning", "waived": "note"}
        assert result["level"] == expected[result["properties"]["severity"]]

    by_rule = {(r["ruleId"], r["properties"]["verdict"]): r for r in results}
    production = by_rule["port.production", "rejected"]
    assert production["level"] == "error"
    assert production["message"]["text"].endswith("every evidence item <passed> & fresh")
    location = production["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == DEPLOYMENT_SOURCE
    assert location["physicalLocation"]["region"]["startLine"] == line_of(
        DEPLOYMENT_YAML, "stage: production"
    )
    assert location["logicalLocations"] == [
        {"fullyQualifiedName": "DeploymentManifest/v41-flash-h100-prod:spec.stage"}
    ]
    assert production["properties"] == {"verdict": "rejected", "severity": "deny"}

    kv_cache = by_rule["service.kv_cache", "rejected"]["locations"][0]["physicalLocation"]
    assert kv_cache["region"]["startLine"] == line_of(DEPLOYMENT_YAML, "kv_cache:")
    missing = by_rule["claims.performance", "rejected"]["locations"][0]["physicalLocation"]
    assert missing["region"]["startLine"] == line_of(DEPLOYMENT_YAML, "evidence:")

    waived = by_rule["port.isolation", "rejected"]
    assert waived["level"] == "note"
    assert waived["suppressions"][0]["kind"] == "external"
    assert waived["properties"]["waiverId"] == "w-12"

    # the second document of the hardware file
    platform = by_rule["support.platform", "experimental"]["locations"][0]["physicalLocation"]
    assert platform["artifactLocation"]["uri"] == HARDWARE_SOURCE
    assert platform["region"]["startLine"] == line_of(
        HARDWARE_YAML, "accelerator:", start=line_of(HARDWARE_YAML, "---")
    )


def test_sarif_fingerprints_are_stable_and_distinct() -> None:
    results = sarif(RESULTS)["runs"][0]["results"]
    prints = [r["partialFingerprints"]["supportgate/v1"] for r in results]
    assert len(set(prints)) == len(prints)
    moved = CheckedManifest(DEPLOYMENT_SOURCE, REJECTED, "\n\n\n" + DEPLOYMENT_YAML)
    moved_results = sarif([moved])["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in moved_results] == [
        r["partialFingerprints"] for r in results[: len(moved_results)]
    ]
    moved_region = moved_results[0]["locations"][0]["physicalLocation"]["region"]
    assert moved_region["startLine"] == line_of(DEPLOYMENT_YAML, "stage: production") + 3
    # pinned: a changed fingerprint re-opens every alert already triaged in code scanning
    production = next(v for v in REJECTED.violations if v.rule == "port.production")
    key = "DeploymentManifest\0v41-flash-h100-prod\0port.production\0spec.stage"
    assert fingerprint(RESULTS[0], production) == prints[0]
    assert prints[0] == hashlib.sha256(key.encode()).hexdigest()


def test_sarif_without_text_or_findings() -> None:
    blind = sarif([CheckedManifest("deploy\\windows\\dep.yaml", REJECTED, None)])
    result = blind["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert result["artifactLocation"]["uri"] == "deploy/windows/dep.yaml"
    assert result["region"]["startLine"] == 1

    clean = sarif(CLEAN)["runs"][0]
    assert clean["results"] == []
    assert [rule["id"] for rule in clean["tool"]["driver"]["rules"]] == ["check.input-error"]
    assert clean["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]


# --- junit -----------------------------------------------------------------------------------


def junit(results: Any, fail_on: Any = "rejected", problems: Any = ()) -> ET.Element:
    out = render(Report(results, fail_on=fail_on, problems=problems), "junit")
    assert out.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(out)  # noqa: S314 - parses the XML this test just rendered


def test_junit_suites_cases_and_counts() -> None:
    root = junit(RESULTS)
    assert root.tag == "testsuites"
    assert root.get("name") == "supportgate"
    assert (root.get("tests"), root.get("failures")) == ("3", "1")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [DEPLOYMENT_SOURCE, HARDWARE_SOURCE]
    assert [(s.get("tests"), s.get("failures")) for s in suites] == [("1", "1"), ("2", "0")]
    assert [(c.get("classname"), c.get("name")) for c in suites[1].findall("testcase")] == [
        ("HardwareManifest", "b200-pool"),
        ("HardwareManifest", "h100-pool-a"),
    ]

    case = suites[0].find("testcase")
    assert case is not None
    assert (case.get("classname"), case.get("name")) == (
        "DeploymentManifest",
        "v41-flash-h100-prod",
    )
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("type") == "rejected"
    assert "2 deny" in (failure.get("message") or "")
    body = failure.text or ""
    assert body.splitlines()[0].startswith("deny port.production spec.stage: ")
    for v in REJECTED.violations:
        assert v.rule in body
    out = case.findtext("system-out") or ""
    assert "warn service.external spec.service: external: 100% of components, a, b" in out
    assert "waived port.isolation" in out
    assert "deny" not in out.split()

    passing = suites[1].findall("testcase")
    assert all(c.find("failure") is None for c in passing)
    assert "warn support.platform" in (passing[1].findtext("system-out") or "")
    assert passing[0].find("system-out") is None
    # the experimental pool passes the gate, and shows as skipped with its reason
    assert passing[0].find("skipped") is None
    skipped = passing[1].find("skipped")
    assert skipped is not None
    assert skipped.get("type") == "experimental"
    assert skipped.text == skipped.get("message")
    assert (skipped.text or "").startswith(
        "HardwareManifest/h100-pool-a is experimental (support.platform): not officially"
    )
    assert (suites[1].get("skipped"), suites[0].get("skipped")) == ("1", "0")
    assert root.get("skipped") is None  # junit-10.xsd allows no skipped on testsuites


def test_junit_experimental_gate() -> None:
    root = junit(RESULTS, "experimental")
    assert (root.get("tests"), root.get("failures")) == ("3", "2")
    hardware = root.findall("testsuite")[1]
    assert hardware.get("failures") == "1"
    cases = hardware.findall("testcase")
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.get("type") == "experimental"
    assert cases[1].find("skipped") is None
    assert hardware.get("skipped") == "0"


def test_junit_escapes_markup_and_drops_what_xml_cannot_carry() -> None:
    message = 'a <b> & "c" \x00\x1b end'
    nasty = decision(
        "HardwareManifest",
        "pool",
        "rejected",
        (violation("host.os", "deny", "spec.os.name", message),),
    )
    out = render(Report([CheckedManifest("x&y<z>.yaml", nasty, None)]), "junit")
    assert "&lt;b&gt; &amp;" in out
    assert "<b>" not in out
    assert "\x00" not in out
    assert "\x1b" not in out
    root = ET.fromstring(out)  # noqa: S314 - parses the XML this test just rendered
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("name") == "x&y<z>.yaml"
    body = root.findtext("testsuite/testcase/failure") or ""
    assert 'a <b> & "c" ' in body
    assert body.endswith(" end")


# --- github ----------------------------------------------------------------------------------


def test_github_annotations() -> None:
    out = render(Report(RESULTS), "github")
    lines = out.splitlines()
    assert len(lines) == 7 + 1  # one per violation, no line broken by a message, a summary
    assert all(line.startswith("::") for line in lines)
    assert lines[0] == (
        f"::error file={DEPLOYMENT_SOURCE},line={line_of(DEPLOYMENT_YAML, 'stage: production')},"
        "title=port.production::DeploymentManifest/v41-flash-h100-prod spec.stage: "
        "stage production on unlisted nvidia/sm90 needs every evidence item <passed> & fresh"
    )
    commands = [line.split(" ", 1)[0] for line in lines[:-1]]
    assert commands == [
        "::error",
        "::error",
        "::notice",
        "::warning",
        "::warning",
        "::warning",
        "::warning",
    ]
    # data escaping: %, CR and LF
    assert lines[1].endswith("kv_cache source is missing%0D%0Aadd a provider")
    assert "external: 100%25 of components, a, b" in lines[4]
    assert lines[-1] == (
        "::error title=supportgate::3 manifests: 1 supported, 1 experimental, 1 rejected; "
        "gate: failed (fail on rejected)"
    )
    hardware_second = line_of(HARDWARE_YAML, "accelerator:", start=line_of(HARDWARE_YAML, "---"))
    assert f"file={HARDWARE_SOURCE},line={hardware_second},title=support.platform::" in lines[6]


def test_github_escapes_properties_and_passes_clean_runs() -> None:
    odd = CheckedManifest("./dir,a/b:c%.yaml", EXPERIMENTAL, None)
    out = render(Report([odd], fail_on="experimental"), "github")
    first, summary = out.splitlines()
    assert first.startswith("::warning file=dir%2Ca/b%3Ac%25.yaml,title=support.platform::")
    assert "line=" not in first  # no text, no line: the annotation goes on the file
    assert summary.startswith("::error title=supportgate::")

    clean = render(Report(CLEAN, fail_on="experimental"), "github").splitlines()
    assert clean == [
        "::notice title=supportgate::1 manifests: 1 supported, 0 experimental, 0 rejected; "
        "gate: passed (fail on experimental)"
    ]


def test_github_escape_functions() -> None:
    assert escape_data("50%\r\nnext: a, b") == "50%25%0D%0Anext: a, b"
    assert escape_property("50%\r\nnext: a, b") == "50%25%0D%0Anext%3A a%2C b"
    # % goes first, so an escape is never escaped twice
    assert escape_property("%3A") == "%253A"


# --- problems: every format still reports, and says what is wrong ------------------------

BROKEN_YAML = """\
apiVersion: supportgate/v1
kind: HardwareManifest
metadata: {name: Bad_Name}
spec: {}
"""
BROKEN_SOURCE = "hardware/broken.yaml"
BROKEN = Problem(
    f"{BROKEN_SOURCE}: expected a DNS label, got 'Bad_Name' - at `$.metadata.name`",
    source=BROKEN_SOURCE,
    field="$.metadata.name",
    text=BROKEN_YAML,
    document_index=0,
)
BAD_AT = Problem("--at: not an RFC 3339 time: 'yesterday'", field="--at")
PROBLEMS = (BROKEN, BAD_AT)


def test_text_lists_problems_first_and_the_gate_is_an_error() -> None:
    out = render(Report(RESULTS, problems=PROBLEMS), "text")
    lines = out.splitlines()
    located = f"{BROKEN.message} (line {line_of(BROKEN_YAML, 'Bad_Name')})"
    assert lines[:2] == [f"ERROR  {located}", f"ERROR  {BAD_AT.message}"]
    assert lines[2].startswith("FAIL  ")
    assert lines[-1] == (
        "3 manifests: 1 supported, 1 experimental, 1 rejected; 2 errors; "
        "gate: error (fail on rejected)"
    )
    lone = render(Report([], problems=[BAD_AT]), "text").splitlines()
    assert lone[-1].endswith("; 1 error; gate: error (fail on rejected)")


def test_json_errors_list() -> None:
    document = json.loads(render(Report(RESULTS[1:], problems=PROBLEMS), "json"))
    assert document["gate"] == {"fail_on": "rejected", "status": "error", "passed": False}
    assert document["errors"] == [
        {
            "source": BROKEN_SOURCE,
            "field": "$.metadata.name",
            "line": line_of(BROKEN_YAML, "Bad_Name"),
            "column": None,
            "message": BROKEN.message,
        },
        {
            "source": None,
            "field": "--at",
            "line": None,
            "column": None,
            "message": BAD_AT.message,
        },
    ]
    assert len(document["results"]) == 2  # the files that were fine are still reported


def test_junit_error_case_per_problem() -> None:
    root = junit(RESULTS, problems=PROBLEMS)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "1", "2")
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    broken = suites[BROKEN_SOURCE]
    assert (broken.get("file"), broken.get("tests"), broken.get("errors")) == (
        BROKEN_SOURCE,
        "1",
        "1",
    )
    case = broken.find("testcase")
    assert case is not None
    assert (case.get("classname"), case.get("name")) == ("input", BROKEN_SOURCE)
    error = case.find("error")
    assert error is not None
    assert error.get("message") == f"{BROKEN.message} (line {line_of(BROKEN_YAML, 'Bad_Name')})"
    assert "$.metadata.name" in (error.text or "")
    no_file = suites["supportgate"]
    assert no_file.get("file") is None
    assert no_file.findtext("testcase/error") == BAD_AT.message


def test_github_error_annotations() -> None:
    lines = render(Report([], problems=PROBLEMS), "github").splitlines()
    assert lines == [
        f"::error file={BROKEN_SOURCE},line={line_of(BROKEN_YAML, 'Bad_Name')},"
        f"title=supportgate%3A input error::{BROKEN.message}",
        f"::error title=supportgate%3A input error::{BAD_AT.message}",
        "::error title=supportgate::0 manifests: 0 supported, 0 experimental, 0 rejected; "
        "2 errors; gate: error (fail on rejected)",
    ]


def test_sarif_problems_fail_the_invocation_and_name_file_and_field() -> None:
    log = json.loads(render(Report(RESULTS[1:], problems=PROBLEMS), "sarif"))
    run = log["runs"][0]
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    assert invocation["exitCode"] == 2
    broken, bad_at = invocation["toolExecutionNotifications"]
    assert broken["level"] == "error"
    assert broken["message"]["text"] == BROKEN.message
    (location,) = broken["locations"]
    assert location["physicalLocation"]["artifactLocation"] == {
        "uri": BROKEN_SOURCE,
        "uriBaseId": "%SRCROOT%",
    }
    assert location["physicalLocation"]["region"]["startLine"] == line_of(BROKEN_YAML, "Bad_Name")
    assert location["logicalLocations"] == [{"fullyQualifiedName": "$.metadata.name"}]
    assert bad_at["locations"] == [{"logicalLocations": [{"fullyQualifiedName": "--at"}]}]
    # the broken file is also an alert where the file is; the option error has no file
    input_results = [r for r in run["results"] if r["ruleId"] == "check.input-error"]
    assert [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in input_results
    ] == [BROKEN_SOURCE]
    assert sarif_schema_errors(log) == []
    assert github_problems(log) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_reports_problems_alone(fmt: str) -> None:
    out = render(Report([], fail_on="experimental", problems=PROBLEMS), fmt)
    assert out.endswith("\n")
    assert "$.metadata.name" in out
    assert "--at" in out
    assert "yesterday" in out


# --- SARIF rules from the catalogue ----------------------------------------------------


def rule_info(rule_id: str, severity: str) -> RuleInfo:
    return RuleInfo(
        id=rule_id,
        severity=severity,
        title=f"Title of {rule_id}",
        description=f"What {rule_id} checks.",
        remediation=f"How to satisfy {rule_id}.",
        module=f"supportgate/{rule_id.split('.', maxsplit=1)[0]}/x.rego",
    )


CATALOG = {
    rule_id: rule_info(rule_id, severity)
    for rule_id, severity in [
        ("port.production", "deny"),
        ("port.isolation", "deny"),
        ("service.kv_cache", "deny"),
        ("host.os", "deny"),
        ("service.external", "warn"),
        ("claims.performance", "warn"),
        ("support.platform", "warn"),
    ]
}
DOCS = "https://docs.example/supportgate/"
WITH_CATALOG = SarifOptions(rules=CATALOG, docs_url=DOCS)


def sarif_with(results: Any, options: SarifOptions = WITH_CATALOG, **kw: Any) -> dict[str, Any]:
    out = render(Report(results, **kw), "sarif", options)
    log: dict[str, Any] = json.loads(out)
    return log


def test_sarif_rule_descriptors_come_from_the_catalogue() -> None:
    driver = sarif_with(RESULTS)["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == DOCS + "reports.md"
    rules = {rule["id"]: rule for rule in driver["rules"]}
    assert list(rules) == [*sorted(CATALOG), "check.input-error"]
    production = rules["port.production"]
    assert production["shortDescription"] == {"text": "Title of port.production"}
    assert production["fullDescription"] == {"text": "What port.production checks."}
    assert production["help"]["text"] == (
        "What port.production checks.\n\nHow to fix: How to satisfy port.production."
    )
    markdown = production["help"]["markdown"]
    assert "**How to fix:** How to satisfy port.production." in markdown
    assert production["helpUri"] == DOCS + "rules.md#port-production"
    assert f"[Documentation]({production['helpUri']})" in markdown
    assert production["defaultConfiguration"] == {"level": "error"}
    assert production["properties"] == {
        "tags": ["supportgate", "compliance", "security", "port"],
        "precision": "very-high",
        "problem.severity": "error",
        "security-severity": "8.0",
    }
    platform = rules["support.platform"]
    assert platform["defaultConfiguration"] == {"level": "warning"}
    assert platform["properties"]["security-severity"] == "3.0"
    assert rules["check.input-error"]["helpUri"] == DOCS + "reports.md#input-errors"


def test_sarif_rules_are_the_same_in_every_run() -> None:
    """The rules array (ids, order, levels) does not depend on what fired or how."""
    runs = [
        sarif_with(RESULTS),
        sarif_with(CLEAN),
        sarif_with(RESULTS[2:]),
        sarif_with([], problems=PROBLEMS),
    ]
    rule_arrays = [run["runs"][0]["tool"]["driver"]["rules"] for run in runs]
    assert all(rules == rule_arrays[0] for rules in rule_arrays)
    # port.isolation is only waived in RESULTS: its result is a note, its rule an error
    isolation = next(r for r in runs[0]["runs"][0]["results"] if r["ruleId"] == "port.isolation")
    assert isolation["level"] == "note"

    # without a catalogue too: a deny seen only waived in one run keeps the deny's level
    denied = decision(
        "DeploymentManifest", "d", "rejected", (violation("org.x", "deny", "spec", "m"),)
    )
    waived = decision(
        "DeploymentManifest", "d", "experimental", (violation("org.x", "waived", "spec", "m"),)
    )
    levels = [
        {
            rule["id"]: rule["defaultConfiguration"]["level"]
            for rule in sarif([CheckedManifest("d.yaml", d, None)])["runs"][0]["tool"]["driver"][
                "rules"
            ]
        }
        for d in (denied, waived)
    ]
    assert levels[0] == levels[1] == {"check.input-error": "error", "org.x": "error"}


def test_sarif_regions_cover_the_located_line() -> None:
    result = sarif_with(RESULTS)["runs"][0]["results"][0]
    assert result["ruleId"] == "port.production"
    line = line_of(DEPLOYMENT_YAML, "stage: production")
    text = DEPLOYMENT_YAML.splitlines()[line - 1]
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": line,
        "startColumn": text.index("stage") + 1,
        "endLine": line,
        "endColumn": len(text) + 1,
    }


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("a.yaml", {"uri": "sub/a.yaml", "uriBaseId": "%SRCROOT%"}),
        ("./deep/b c.yaml", {"uri": "sub/deep/b%20c.yaml", "uriBaseId": "%SRCROOT%"}),
        ("../up.yaml", {"uri": "up.yaml", "uriBaseId": "%SRCROOT%"}),
        ("/repo/x/abs.yaml", {"uri": "x/abs.yaml", "uriBaseId": "%SRCROOT%"}),
        ("/repo/sub/../x/abs.yaml", {"uri": "x/abs.yaml", "uriBaseId": "%SRCROOT%"}),
        ("/elsewhere/c.yaml", {"uri": "file:///elsewhere/c.yaml"}),
        ("/repository/c.yaml", {"uri": "file:///repository/c.yaml"}),  # not under /repo
        ("../../outside.yaml", {"uri": "file:///outside.yaml"}),
    ],
)
def test_sarif_paths_are_relative_to_the_root(source: str, expected: dict[str, str]) -> None:
    options = SarifOptions(root="/repo", cwd="/repo/sub")
    assert artifact_location(source, options) == expected


def test_sarif_declares_the_root_it_is_relative_to() -> None:
    options = SarifOptions(rules=CATALOG, root="/repo", cwd="/repo", docs_url=DOCS)
    absolute = [CheckedManifest("/repo/deploy/d.yaml", REJECTED, DEPLOYMENT_YAML)]
    run = sarif_with(absolute, options)["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///repo/"
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert uris == {"deploy/d.yaml"}


@pytest.mark.parametrize(
    ("results", "problems"),
    [(RESULTS, ()), (CLEAN, ()), ((), PROBLEMS), (RESULTS, PROBLEMS)],
)
def test_sarif_meets_the_schema_and_githubs_requirements(results: Any, problems: Any) -> None:
    for options in (WITH_CATALOG, SarifOptions(), SarifOptions(root="/repo", cwd="/repo")):
        log = sarif_with(results, options, problems=problems)
        assert sarif_schema_errors(log) == []
        assert github_problems(log) == []


def test_the_schema_checks_can_fail() -> None:
    """The validators used above reject what GitHub would refuse."""
    log = sarif_with(RESULTS)
    run = log["runs"][0]
    run["results"][0]["ruleIndex"] = 0 if run["results"][0]["ruleIndex"] else 1
    run["tool"]["driver"]["rules"][0]["fullDescription"]["text"] = ""
    del run["results"][1]["locations"][0]["physicalLocation"]["region"]["endColumn"]
    run["results"][2]["level"] = "fatal"
    assert len(github_problems(log)) == 3
    assert sarif_schema_errors(log) != []


def test_rule_anchors_and_help_uris() -> None:
    assert rule_anchor("port.production") == "port-production"
    assert rule_anchor("service.kv_cache") == "service-kv_cache"
    assert rule_anchor("org.Acme.rule-1") == "org-acme-rule-1"
    assert rule_help_uri(DOCS, "host.os") == DOCS + "rules.md#host-os"


def test_junit_times_add_up() -> None:
    timed = (
        CheckedManifest(HARDWARE_SOURCE, SUPPORTED, HARDWARE_YAML, 0, seconds=0.25),
        CheckedManifest(HARDWARE_SOURCE, EXPERIMENTAL, HARDWARE_YAML, 1, seconds=0.125),
        CheckedManifest(DEPLOYMENT_SOURCE, REJECTED, DEPLOYMENT_YAML, seconds=1.5),
    )
    root = junit(timed)
    assert root.get("time") == "1.875"
    suites = root.findall("testsuite")
    assert [suite.get("time") for suite in suites] == ["0.375", "1.500"]
    assert [case.get("time") for case in suites[0].findall("testcase")] == ["0.250", "0.125"]
