"""Organisation policy bundles from the command line, as a team would use them
(docs/organisation-policies.md): `supportgate policy check | rules | test`, and
`supportgate check` reporting the bundle's rules in its decisions, SARIF and JUnit."""

from __future__ import annotations

import json
import shutil
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from supportgate.cli import main
from tests.examples import EXAMPLES

REPO = Path(__file__).resolve().parents[2]
ACME = REPO / "examples" / "policies" / "acme"
ACME_FILE = "supportgate/org/acme/acme.rego"  # in the directory its package names
AT = "2026-11-30T00:00:00Z"
ACME_RULES = {"org.acme.decode-replicas", "org.acme.rtx-production", "org.acme.quantization"}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def bundle(tmp_path: Path, name: str, *, edit: tuple[str, str] | None = None) -> Path:
    """A copy of the example bundle named `name`, with one text replaced in its acme.rego."""
    target = tmp_path / name
    shutil.copytree(ACME, target)
    if edit is not None:
        rules = target / ACME_FILE
        text = rules.read_text()
        assert edit[0] in text
        rules.write_text(text.replace(edit[0], edit[1], 1))
    return target


def line_of(path: Path, text: str) -> int:
    return next(
        number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line
    )


@pytest.fixture(autouse=True)
def _no_bundles_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SUPPORTGATE_POLICY_BUNDLES", raising=False)
    monkeypatch.delenv("SUPPORTGATE_POLICY_DIR", raising=False)


# --- policy check ------------------------------------------------------------------------------


def test_check_accepts_the_example_bundle(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "policy", "check", str(ACME))
    assert (code, err) == (0, "")
    assert "3 rules" in out


def test_check_refuses_a_rule_without_metadata_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = bundle(tmp_path, "acme", edit=("# METADATA\n# title: No RTX cards", "# title: No RTX"))
    # What was the METADATA block is now a plain comment: the rule head below has none.
    code, _, err = run(capsys, "policy", "check", str(bad))
    head = line_of(bad / ACME_FILE, '"rule": "org.acme.rtx-production"')
    assert code == 2
    assert f"{bad}/{ACME_FILE}:{head}: deny rule without a METADATA block" in err


def test_check_refuses_ids_that_collide_with_each_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = bundle(tmp_path, "acme"), bundle(tmp_path, "acme2")
    (second / ACME_FILE).write_text(
        (second / ACME_FILE).read_text().replace("supportgate.org.acme", "supportgate.org.acme2")
    )
    (second / ACME_FILE.replace("acme.rego", "acme_test.rego")).unlink()
    code, _, err = run(capsys, "policy", "check", str(first), str(second))
    assert code == 2
    head = line_of(second / ACME_FILE, '"rule": "org.acme.decode-replicas"')
    assert (
        f"{second}/{ACME_FILE}:{head}: rule id org.acme.decode-replicas is already declared by "
        f"{first}/{ACME_FILE}:" in err
    )


def test_check_refuses_ids_of_the_built_in_policies_and_outside_org(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = bundle(tmp_path, "acme", edit=("id: org.acme.rtx-production", "id: port.production"))
    code, _, err = run(capsys, "policy", "check", str(bad))
    assert code == 2
    assert "custom.id must be a rule id starting 'org.', got 'port.production'" in err
    assert "rule id port.production is already declared by the built-in policies" in err


def test_check_refuses_a_package_outside_supportgate_org(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = bundle(
        tmp_path, "acme", edit=("package supportgate.org.acme", "package supportgate.port")
    )
    code, _, err = run(capsys, "policy", "check", str(bad))
    assert code == 2
    assert f"{bad}/{ACME_FILE}:4: package supportgate.port is not supportgate.org.<name>" in err


def test_check_refuses_a_syntax_error_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = bundle(tmp_path, "acme", edit=("decode < 2 * domain", "decode < 2 * "))
    code, _, err = run(capsys, "policy", "check", str(bad))
    assert code == 2
    # The parser finds the expression unfinished at the next line's `message := ...`.
    line = line_of(bad / ACME_FILE, "decode < 2 * ")
    assert f"{bad}/{ACME_FILE}:{line + 1}: does not compile: expecting" in err


def test_check_refuses_a_severity_that_is_not_the_rules_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = bundle(tmp_path, "acme", edit=("#   severity: warn", "#   severity: deny"))
    code, _, err = run(capsys, "policy", "check", str(bad))
    assert code == 2
    assert "custom.severity must be 'warn'" in err


# --- policy rules ------------------------------------------------------------------------------


def test_rules_prints_the_built_in_and_the_bundles_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = run(capsys, "policy", "rules")
    builtin = json.loads(out)
    assert code == 0
    assert builtin["bundles"] == []
    assert {rule["source"] for rule in builtin["rules"]} == {"builtin"}

    archive = tmp_path / "acme.tar.gz"  # the same bundle as an OPA bundle file
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(ACME / ACME_FILE, arcname="/acme/acme.rego")
    monkeypatch.setenv("SUPPORTGATE_POLICY_BUNDLES", f"{archive}")
    code, out, _ = run(capsys, "policy", "rules")
    document = json.loads(out)
    assert code == 0
    assert [bundle["name"] for bundle in document["bundles"]] == ["acme"]
    assert document["revision"] != builtin["revision"]
    org = {rule["id"]: rule for rule in document["rules"] if rule["source"] == "acme"}
    assert set(org) == ACME_RULES
    assert org["org.acme.quantization"]["severity"] == "warn"
    assert org["org.acme.rtx-production"]["title"] == "No RTX cards in production"
    assert len(document["rules"]) == len(builtin["rules"]) + 3


def test_a_bad_configured_bundle_is_refused_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = bundle(tmp_path, "acme", edit=("decode < 2 * domain", "decode < 2 * "))
    monkeypatch.setenv("SUPPORTGATE_POLICY_BUNDLES", str(bad))
    code, out, err = run(capsys, "policy", "rules")
    assert (code, out) == (2, "")
    assert "SUPPORTGATE_POLICY_BUNDLES: organisation policies refused" in err
    assert f"{bad}/{ACME_FILE}:" in err


# --- policy test -------------------------------------------------------------------------------


def test_test_runs_the_built_in_and_the_bundles_tests(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "policy", "test", str(ACME))
    assert out.startswith("engine: ")
    assert "acme: PASS: 8/8" in out
    assert code == 0, out


def test_test_passes_without_opa_skipping_what_only_opa_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newcomer without OPA runs the built-in tests on regorus: all pass, and the one test
    only OPA can run (its METADATA says so, and why) is skipped, saying so."""
    monkeypatch.setattr("supportgate.policy.rego_tests.shutil.which", lambda _name: None)
    code, out, _ = run(capsys, "policy", "test", str(ACME))
    assert out.startswith("engine: regorus (no opa on PATH)")
    assert (
        "data.supportgate.evidence_test.test_evidence_stale_quiet_with_odd_at: SKIP (only OPA "
        "runs it: OPA makes a builtin's error"
    ) in out
    assert "(1 skipped: only OPA runs them, `opa test`)" in out
    assert "FAIL" not in out
    assert "ERROR" not in out
    assert code == 0, out


def test_test_fails_on_a_failing_bundle_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = bundle(tmp_path, "acme", edit=("decode < 2 * domain", "decode < domain"))
    code, out, _ = run(capsys, "policy", "test", str(broken))
    assert code == 1
    assert "test_decode_replicas_fires_on_one_domain_in_production" in out


# --- supportgate check with a bundle -----------------------------------------------------------


def test_check_reports_the_bundles_rules_in_decisions_sarif_and_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [str(EXAMPLES / "hw-b200-pool.yaml"), str(EXAMPLES / "dep-b200-offline.yaml")]
    code, out, _ = run(capsys, "check", "--at", AT, "--format", "json", *files)
    assert code == 0  # supported by the built-in rules alone

    monkeypatch.setenv("SUPPORTGATE_POLICY_BUNDLES", str(ACME))
    code, out, _ = run(capsys, "check", "--at", AT, "--format", "json", *files)
    assert code == 1
    report = json.loads(out)
    deployment = report["results"][1]["decision"]
    assert deployment["verdict"] == "rejected"
    assert [v["rule"] for v in deployment["violations"]] == ["org.acme.decode-replicas"]

    code, out, _ = run(capsys, "check", "--at", AT, "--format", "sarif", *files)
    run_ = json.loads(out)["runs"][0]
    described = {rule["id"]: rule for rule in run_["tool"]["driver"]["rules"]}
    assert set(described) >= ACME_RULES
    assert described["org.acme.decode-replicas"]["shortDescription"]["text"] == (
        "Production decodes on at least two scale-up domains"
    )
    assert [result["ruleId"] for result in run_["results"]] == ["org.acme.decode-replicas"]

    code, out, _ = run(capsys, "check", "--at", AT, "--format", "junit", *files)
    junit = ET.fromstring(out)  # noqa: S314 - the XML supportgate just wrote
    failures = [element.text or "" for element in junit.iter("failure")]
    assert len(failures) == 1
    assert failures[0].startswith("deny org.acme.decode-replicas spec.topology.decode_gpus"), out
