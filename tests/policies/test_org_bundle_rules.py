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
from tests.policies.test_org_policy_cli import run

METADATA = """# METADATA
# title: {title}
# description: What it asks.
# custom:
#   id: {id}
#   severity: {set}
"""


def write_bundle(tmp_path: Path, text: str | bytes, *, name: str = "spoof") -> Path:
    directory = tmp_path / name
    directory.mkdir()
    module = directory / f"{name}.rego"
    if isinstance(text, str):
        module.write_text(text, encoding="utf-8")
    else:
        module.write_bytes(text)
    return directory


def metadata(rule_id: str, head_set: str = "deny") -> str:
    return METADATA.format(title="A rule", id=rule_id, set=head_set)


def check(capsys: pytest.CaptureFixture[str], directory: Path) -> tuple[int, str]:
    code, _, err = run(capsys, "policy", "check", str(directory))
    assert "Traceback" not in err
    return code, err


@pytest.fixture(autouse=True)
def _no_bundles_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SUPPORTGATE_POLICY_BUNDLES", raising=False)
    monkeypatch.delenv("SUPPORTGATE_POLICY_DIR", raising=False)


# A module that adds to the decision's waiver table: every built-in deny becomes "waived".
FORGED_WAIVERS = """_waiver_ids[rule] := "forged" if {
	some rule in {"support.unknown", "port.production"}
}
"""
SPOOF = "package supportgate.org.spoof\n\n"
DEPLOYMENT = '\tinput.manifest.kind == "DeploymentManifest"\n'
FINDING_IN_HEAD = 'contains {"rule": "<its METADATA custom.id>", "message": ..., "path": ...}'
FORBIDDEN_CALLS = {
    "http.send": 'http.send({"method": "post", "url": "https://example.com", "body": input})',
    "net.lookup_ip_addr": 'net.lookup_ip_addr("example.com")',
    "opa.runtime": "opa.runtime().env",
    "time.now_ns": "time.now_ns()",
    "rand.intn": 'rand.intn("x", 10)',
    "uuid.rfc4122": 'uuid.rfc4122("x")',
    "trace": 'trace("x")',
}

# Each refused module, and what the refusal says ({file}: the module's path).
REFUSED: dict[str, tuple[str | bytes, tuple[str, ...]]] = {
    "indented-package": (
        "  package supportgate.decision\n\n" + FORGED_WAIVERS,
        ("{file}:1: package supportgate.decision is not supportgate.org",),
    ),
    "package-hidden-by-next-line": (
        "# ACME\x85package supportgate.org.spoof\npackage supportgate.decision\n\n"
        + FORGED_WAIVERS,
        (
            "{file}:2: package supportgate.decision is not supportgate.org",
            "{file}:1: U+0085 breaks a line for people but not for Rego",
        ),
    ),
    "speaks-for-a-built-in": (
        SPOOF
        + metadata("org.spoof.harmless")
        + 'deny contains {"rule": "port.production", "message": "m", "path": "spec"} if {\n'
        + DEPLOYMENT
        + "}\n",
        (
            "{file}:9: the finding's \"rule\" is 'port.production', not the METADATA custom.id "
            "'org.spoof.harmless'",
        ),
    ),
    "indented-deny-without-metadata": (
        SPOOF
        + ' deny contains {"rule": "port.production", "message": "m", "path": "spec"} if {\n'
        + DEPLOYMENT
        + "}\n",
        ("{file}:3: deny rule without a METADATA block above it",),
    ),
    "finding-in-a-variable": (
        SPOOF
        + metadata("org.spoof.a")
        + 'deny contains finding if {\n\tfinding := {"rule": "org.spoof.a", "message": "m"}\n}\n',
        ("{file}:9: ", FINDING_IN_HEAD),
    ),
    "computed-rule": (
        SPOOF
        + metadata("org.spoof.a")
        + 'deny contains {"rule": rule, "message": "m", "path": "p"} if {\n'
        + '\trule := "org.spoof.a"\n}\n',
        ("{file}:9: ", FINDING_IN_HEAD),
    ),
    "ref-head": (
        SPOOF
        + metadata("org.spoof.a")
        + 'deny.extra contains {"rule": "org.spoof.a", "message": "m", "path": "p"} if {\n'
        + "\ttrue\n}\n",
        ("{file}:9: ", FINDING_IN_HEAD),
    ),
    **{
        name: (
            SPOOF
            + metadata("org.spoof.a")
            + 'deny contains {"rule": "org.spoof.a", "message": "m", "path": "spec"} if {\n'
            + DEPLOYMENT
            + f"\tx := {call}\n\tx != null\n}}\n",
            ("{file}:11: " + name + " is not allowed in a bundle",),
        )
        for name, call in FORBIDDEN_CALLS.items()
    },
    "warn-without-a-path": (
        SPOOF
        + metadata("org.spoof.named", "warn")
        + 'warn contains {"rule": "org.spoof.named", "message": "name it"} if {\n'
        + "\tnot input.manifest.metadata.owner\n}\n",
        ("{file}:9: a finding is {rule, message, path}",),
    ),
    "finding-no-string-on-the-examples": (
        SPOOF
        + metadata("org.spoof.count", "warn")
        + 'warn contains {"rule": "org.spoof.count", "message": count, "path": "spec"} if {\n'
        + "\tcount := 1 + 1\n}\n",
        ("{file}:9: on the example ", "each a string"),
    ),
    "no-metadata-names-the-fix": (
        SPOOF
        + 'deny contains {"rule": "org.spoof.b", "message": "m", "path": "p"} if {\n\ttrue\n}\n',
        ("supportgate: error: organisation policies refused:", "emit that rule's custom.id"),
    ),
    "no-utf8": (
        b"package supportgate.org.spoof\n# \xff\n",
        ("{file}: cannot be read as UTF-8 text",),
    ),
}


@pytest.mark.parametrize(("module", "said"), REFUSED.values(), ids=REFUSED.keys())
def test_a_bundle_is_refused_naming_file_line_and_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], module: str | bytes, said: tuple[str, ...]
) -> None:
    bundle = write_bundle(tmp_path, module)
    code, err = check(capsys, bundle)
    assert code == 2
    assert err.startswith("supportgate: error: ")
    for line in said:
        assert line.replace("{file}", f"{bundle}/spoof.rego") in err


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
