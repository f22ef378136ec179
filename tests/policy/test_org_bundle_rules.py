"""What an organisation bundle may not do (CONTRACT 11.2), through `supportgate policy check`:
the attacks a review reproduced (a module that joins `supportgate.decision` to forge waivers,
a rule that speaks for a built-in one, calls to the network, OPA's runtime, the clock and
randomness, findings that break every evaluation), each refused naming file and line, and the
OR of Rego (one rule, several bodies) accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from supportgate.policy.opa_check import capabilities
from tests.examples import EXAMPLES
from tests.policy.test_org_policy_cli import run

pytestmark = [pytest.mark.fast, pytest.mark.usefixtures("no_bundles_configured")]

METADATA = """# METADATA
# title: {title}
# description: What it asks.
# custom:
#   id: {id}
#   severity: {set}
"""


def write_bundle(tmp_path: Path, text: str, *, name: str = "spoof") -> Path:
    directory = tmp_path / name
    directory.mkdir()
    (directory / f"{name}.rego").write_text(text, encoding="utf-8")
    return directory


def metadata(rule_id: str, head_set: str = "deny") -> str:
    return METADATA.format(title="A rule", id=rule_id, set=head_set)


def check(capsys: pytest.CaptureFixture[str], directory: Path) -> tuple[int, str]:
    code, _, err = run(capsys, "policy", "check", str(directory))
    assert "Traceback" not in err
    return code, err


# A module that adds to the decision's waiver table: every built-in deny becomes "waived".
FORGED_WAIVERS = """_waiver_ids[rule] := "forged" if {
	some rule in {"support.unknown", "port.production"}
}
"""


def test_a_package_line_indented_is_read_by_the_parser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = write_bundle(tmp_path, "  package supportgate.decision\n\n" + FORGED_WAIVERS)
    code, err = check(capsys, bundle)
    assert code == 2
    assert f"{bundle}/spoof.rego:1: package supportgate.decision is not supportgate.org" in err


def test_a_comment_with_a_next_line_character_does_not_hide_the_package(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "# ACME\x85package supportgate.org.spoof\npackage supportgate.decision\n\n"
    bundle = write_bundle(tmp_path, text + FORGED_WAIVERS)
    code, err = check(capsys, bundle)
    assert code == 2
    assert f"{bundle}/spoof.rego:2: package supportgate.decision is not supportgate.org" in err
    assert f"{bundle}/spoof.rego:1: U+0085 breaks a line for people but not for Rego" in err


def test_a_rule_cannot_speak_for_a_built_in_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "package supportgate.org.spoof\n\n"
        + metadata("org.spoof.harmless")
        + 'deny contains {"rule": "port.production", "message": "m", "path": "spec"} if {\n'
        + '\tinput.manifest.kind == "DeploymentManifest"\n}\n'
    )
    bundle = write_bundle(tmp_path, text)
    code, err = check(capsys, bundle)
    assert code == 2
    assert (
        f"{bundle}/spoof.rego:9: the finding's \"rule\" is 'port.production', not the METADATA "
        "custom.id 'org.spoof.harmless'"
    ) in err


def test_an_indented_deny_without_metadata_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "package supportgate.org.spoof\n\n"
        ' deny contains {"rule": "port.production", "message": "m", "path": "spec"} if {\n'
        '\tinput.manifest.kind == "DeploymentManifest"\n}\n'
    )
    bundle = write_bundle(tmp_path, text)
    code, err = check(capsys, bundle)
    assert code == 2
    assert f"{bundle}/spoof.rego:3: deny rule without a METADATA block above it" in err


@pytest.mark.parametrize(
    "head",
    [
        'deny contains finding if {\n\tfinding := {"rule": "org.spoof.a", "message": "m"}',
        'deny contains {"rule": rule, "message": "m", "path": "p"} if {\n\trule := "org.spoof.a"',
        'deny.extra contains {"rule": "org.spoof.a", "message": "m", "path": "p"} if {\n\ttrue',
    ],
    ids=["variable", "computed-rule", "ref-head"],
)
def test_a_finding_rule_must_be_a_constant_in_the_head(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], head: str
) -> None:
    text = "package supportgate.org.spoof\n\n" + metadata("org.spoof.a") + head + "\n}\n"
    bundle = write_bundle(tmp_path, text)
    code, err = check(capsys, bundle)
    assert code == 2
    assert f"{bundle}/spoof.rego:9: " in err
    assert 'contains {"rule": "<its METADATA custom.id>", "message": ..., "path": ...}' in err


@pytest.mark.parametrize(
    "call",
    [
        'http.send({"method": "post", "url": "https://example.com", "body": input})',
        'net.lookup_ip_addr("example.com")',
        "opa.runtime().env",
        "time.now_ns()",
        'rand.intn("x", 10)',
        'uuid.rfc4122("x")',
        'trace("x")',
    ],
)
def test_forbidden_builtins_are_refused_with_their_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], call: str
) -> None:
    text = (
        "package supportgate.org.spoof\n\n"
        + metadata("org.spoof.a")
        + 'deny contains {"rule": "org.spoof.a", "message": "m", "path": "spec"} if {\n'
        + '\tinput.manifest.kind == "DeploymentManifest"\n'
        + f"\tx := {call}\n\tx != null\n}}\n"
    )
    bundle = write_bundle(tmp_path, text)
    code, err = check(capsys, bundle)
    name = call.split("(", maxsplit=1)[0]
    assert code == 2
    assert f"{bundle}/spoof.rego:11: {name} is not allowed in a bundle" in err


def test_a_warn_without_a_path_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "package supportgate.org.spoof\n\n"
        + metadata("org.spoof.named", "warn")
        + 'warn contains {"rule": "org.spoof.named", "message": "name it"} if {\n'
        + "\tnot input.manifest.metadata.owner\n}\n"
    )
    bundle = write_bundle(tmp_path, text)
    code, err = check(capsys, bundle)
    assert code == 2
    assert f"{bundle}/spoof.rego:9: a finding is {{rule, message, path}}" in err


def test_a_finding_that_is_no_string_is_refused_on_the_examples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "package supportgate.org.spoof\n\n"
        + metadata("org.spoof.count", "warn")
        + 'warn contains {"rule": "org.spoof.count", "message": count, "path": "spec"} if {\n'
        + "\tcount := 1 + 1\n}\n"
    )
    bundle = write_bundle(tmp_path, text)
    code, err = check(capsys, bundle)
    assert code == 2
    assert f"{bundle}/spoof.rego:9: on the example " in err
    assert "each a string" in err


def test_a_rule_without_an_input_condition_is_checked_not_crashed_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "package supportgate.org.always\n\n"
        + metadata("org.always.set", "warn")
        + 'warn contains {"rule": "org.always.set", "message": "set it", "path": "metadata"} if {\n'
        + "\ttrue\n}\n"
    )
    code, err = check(capsys, write_bundle(tmp_path, text, name="always"))
    assert (code, err) == (0, "")


def test_check_runs_a_bundle_with_a_rule_without_an_input_condition(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`supportgate check` loads the bundle as the service does: this one crashed it."""
    text = (
        "package supportgate.org.always\n\n"
        + metadata("org.always.set", "warn")
        + 'warn contains {"rule": "org.always.set", "message": "set it", "path": "metadata"} if {\n'
        + "\ttrue\n}\n"
    )
    monkeypatch.setenv("SUPPORTGATE_POLICY_BUNDLES", str(write_bundle(tmp_path, text, name="a")))
    code, out, err = run(capsys, "check", str(EXAMPLES / "hw-b200-pool.yaml"))
    assert "Traceback" not in err
    assert code == 0, err
    assert "org.always.set" in out


def test_a_rule_of_several_bodies_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = (
        'deny contains {{"rule": "org.either.rtx", "message": "m", "path": "spec"}}'
        " if {{\n\t{}\n}}\n"
    )
    first = 'input.manifest.spec.stage == "production"'
    second = 'input.manifest.spec.mode == "online"'
    metadata_on_first = (
        "package supportgate.org.either\n\n"
        + metadata("org.either.rtx")
        + body.format(first)
        + "\n"
        + body.format(second)
    )
    code, err = check(capsys, write_bundle(tmp_path, metadata_on_first, name="either"))
    assert (code, err) == (0, "")
    metadata_on_each = (
        "package supportgate.org.both\n\n"
        + metadata("org.both.rtx")
        + body.format(first).replace("either", "both")
        + "\n"
        + metadata("org.both.rtx")
        + body.format(second).replace("either", "both")
    )
    code, err = check(capsys, write_bundle(tmp_path, metadata_on_each, name="both"))
    assert (code, err) == (0, "")


def test_a_refusal_names_the_fix_and_no_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "package supportgate.org.spoof\n\n"
        + 'deny contains {"rule": "org.spoof.b", "message": "m", "path": "p"} if {\n\ttrue\n}\n'
    )
    bundle = write_bundle(tmp_path, text)
    code, err = check(capsys, bundle)
    assert code == 2
    assert err.startswith("supportgate: error: organisation policies refused:")
    assert "emit that rule's custom.id" in err


@pytest.mark.opa
def test_a_bundle_opa_refuses_is_refused_where_opa_is_installed(
    opa_binary: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """regorus evaluates the body only when it is reached (never, on the examples); OPA's
    type checker refuses `count(1)` when it compiles the bundle, so under OPA it would never
    activate."""
    text = (
        "package supportgate.org.typed\n\n"
        + metadata("org.typed.count")
        + 'deny contains {"rule": "org.typed.count", "message": "m", "path": "spec"} if {\n'
        + '\tinput.manifest.kind == "NoSuchKind"\n\tcount(1) > 0\n}\n'
    )
    bundle = write_bundle(tmp_path, text, name="typed")
    code, err = check(capsys, bundle)
    assert code == 2
    assert f"{bundle}/typed.rego:11: OPA refuses it: count: invalid argument(s)" in err


@pytest.mark.opa
def test_opas_capabilities_leave_out_the_forbidden_builtins(opa_binary: str) -> None:
    names = {builtin["name"] for builtin in capabilities(opa_binary)["builtins"]}
    assert "sprintf" in names
    assert not names & {"http.send", "opa.runtime", "time.now_ns", "trace", "rand.intn"}
    assert not any(name.startswith(("net.", "uuid.")) for name in names)


def test_a_module_that_is_no_utf8_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = tmp_path / "binary"
    bundle.mkdir()
    (bundle / "binary.rego").write_bytes(b"package supportgate.org.binary\n# \xff\n")
    code, err = check(capsys, bundle)
    assert code == 2
    assert f"{bundle}/binary.rego: cannot be read as UTF-8 text" in err
