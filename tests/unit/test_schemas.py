"""schemas/ is generated from the Structs; this fails when a checked-in file has drifted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from supportgate.manifests.schema import DEFAULT_DIR, SCHEMAS, expected, main, render

REGENERATE = "run `python -m supportgate.manifests.schema --write` (or scripts/schemas)"


@pytest.mark.parametrize("name", sorted(expected()))
def test_checked_in_schema_matches_the_structs(name: str) -> None:
    path = DEFAULT_DIR / name
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
    hardware = json.loads(render(SCHEMAS["hardware"]))
    metadata = hardware["$defs"]["Metadata"]["properties"]
    assert metadata["name"]["pattern"] == "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
    toolkit = hardware["$defs"]["Toolkit"]["properties"]
    assert toolkit["version"]["pattern"] == r"^[0-9]+(\.[0-9]+){0,3}$"
    manifest = hardware["$defs"]["HardwareManifest"]
    assert manifest["properties"]["kind"] == {"enum": ["HardwareManifest"]}
    assert "apiVersion" in manifest["required"]


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
