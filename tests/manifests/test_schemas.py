"""schemas/ is generated from the Structs; this fails when a checked-in file has drifted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from supportgate.manifests.common import STORABLE_TEXT_RE
from supportgate.manifests.hardware import Accelerator
from supportgate.manifests.schema import DEFAULT_DIR, SCHEMAS, expected, main, render

pytestmark = pytest.mark.fast

SCHEMA_DIR = Path(__file__).resolve().parents[2] / DEFAULT_DIR  # the repository's schemas/
REGENERATE = "run `python -m supportgate.manifests.schema --write` (or scripts/schemas)"


@pytest.mark.parametrize("name", sorted(expected()))
def test_checked_in_schema_matches_the_structs(name: str) -> None:
    path = SCHEMA_DIR / name
    assert path.is_file(), f"{path} is missing; {REGENERATE}"
    assert path.read_text("utf-8") == expected()[name], f"{path} has drifted; {REGENERATE}"


def test_there_is_a_schema_per_document() -> None:
    assert sorted(expected()) == [
        "decision.schema.json",
        "deployment.schema.json",
        "hardware.schema.json",
        "matrix.schema.json",
    ]


def test_rendering_is_deterministic_and_pretty() -> None:
    for target in SCHEMAS.values():
        text = render(target)
        assert text == render(target)
        assert text.endswith("}\n")
        assert (
            text
            == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        )


def test_patterns_are_those_of_the_contract() -> None:
    """With END_GUARD, so that a validator using Python's `re` refuses "sm90\\n" too."""
    hardware = json.loads(render(SCHEMAS["hardware"]))
    metadata = hardware["$defs"]["Metadata"]["properties"]
    assert metadata["name"]["pattern"] == "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$(?!\\n)"
    toolkit = hardware["$defs"]["Toolkit"]["properties"]
    assert toolkit["version"]["pattern"] == r"^[0-9]+(\.[0-9]+){0,3}$(?!\n)"
    manifest = hardware["$defs"]["HardwareManifest"]
    assert manifest["properties"]["kind"] == {"enum": ["HardwareManifest"]}
    assert "apiVersion" in manifest["required"]


def test_post_init_checks_are_in_the_schemas() -> None:
    hardware = json.loads(render(SCHEMAS["hardware"]))["$defs"]
    assert hardware["Accelerator"]["if"]["properties"]["vendor"] == {"const": "nvidia"}
    assert hardware["Accelerator"]["then"]["properties"]["arch"]["pattern"].startswith("^sm")
    deployment = json.loads(render(SCHEMAS["deployment"]))["$defs"]
    assert [option["required"] for option in deployment["HardwareBinding"]["oneOf"]] == [
        ["ref"],
        ["spec"],
    ]
    matrix = json.loads(render(SCHEMAS["matrix"]))["$defs"]
    assert "if" in matrix["Platform"]
    assert "if" in matrix["AlternativePlatform"]


def test_every_free_string_and_key_is_storable_text() -> None:
    hardware = json.loads(render(SCHEMAS["hardware"]))["$defs"]
    owner = hardware["Metadata"]["properties"]["owner"]["anyOf"][0]
    assert owner == {"type": "string", "pattern": STORABLE_TEXT_RE}
    labels = hardware["Metadata"]["properties"]["labels"]["anyOf"][0]
    assert labels["propertyNames"] == {"pattern": STORABLE_TEXT_RE}
    assert labels["additionalProperties"] == {"type": "string", "pattern": STORABLE_TEXT_RE}
    engines = json.loads(render(SCHEMAS["matrix"]))["$defs"]["Matrix"]["properties"]["engines"]
    assert engines["propertyNames"] == {"minLength": 1, "pattern": STORABLE_TEXT_RE}


def test_a_rule_may_not_replace_what_msgspec_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Accelerator, "json_schema_rules", {"required": []})
    with pytest.raises(ValueError, match=r"Accelerator.json_schema_rules would replace"):
        render(SCHEMAS["hardware"])


def test_check_and_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check", "--dir", str(tmp_path)]) == 1  # nothing there yet
    assert main(["--write", "--dir", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(expected())
    assert main(["--check", "--dir", str(tmp_path)]) == 0
    (tmp_path / "matrix.schema.json").write_text("{}\n", encoding="utf-8")
    assert main(["--check", "--dir", str(tmp_path)]) == 1
    assert "matrix.schema.json has drifted" in capsys.readouterr().err
    assert main(["--write", "--dir", str(tmp_path)]) == 0
    assert "wrote" in capsys.readouterr().out
    assert main(["--check", "--dir", str(tmp_path)]) == 0


def test_the_default_directory_is_schemas_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["--check"]) == 1  # no schemas/ here: not the checkout's, found from the module
    assert main(["--write"]) == 0
    assert sorted(p.name for p in (tmp_path / "schemas").iterdir()) == sorted(expected())
    assert main(["--check"]) == 0
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "relative to the working directory" in " ".join(capsys.readouterr().out.split())
