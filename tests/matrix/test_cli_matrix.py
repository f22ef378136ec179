"""`supportgate matrix publish FILE` against the configured database (a SQLite file)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from supportgate.cli import main
from supportgate.config import DEFAULT_POLICY_DIR, Settings
from supportgate.db.migrate import upgrade
from supportgate.matrix.services import MatrixService
from supportgate.runtime import Runtime

DEFAULT_MATRIX = DEFAULT_POLICY_DIR / "matrix" / "data.yaml"


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A migrated SQLite file (publishing refuses a missing one: test_cli_missing_database)."""
    url = f"sqlite:///{tmp_path / 'supportgate.db'}"
    upgrade(url)
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", url)
    monkeypatch.delenv("SUPPORTGATE_OPA_URL", raising=False)
    return url


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["matrix", *argv])
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def matrix_file(path: Path, version: str, **changes: object) -> Path:
    """The default matrix as `version`, with `changes`, written to `path` (JSON or YAML)."""
    document = {**yaml.safe_load(DEFAULT_MATRIX.read_text()), "version": version, **changes}
    if path.suffix == ".json":
        path.write_text(json.dumps(document))
    else:
        path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@contextmanager
def stored(url: str) -> Iterator[MatrixService]:
    runtime = Runtime.build(Settings.from_env({"SUPPORTGATE_DATABASE_URL": url}))
    try:
        yield runtime.matrices
    finally:
        runtime.stop()


def test_publish_yaml_then_json(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "publish", str(matrix_file(tmp_path / "matrix.yaml", "2026.12.1")))
    assert code == 0, err
    assert out.strip() == "published matrix version 2026.12.1 (current now)"

    json_file = matrix_file(
        tmp_path / "next.json", "2027.1.1", effective_from="2200-01-01T00:00:00Z"
    )
    code, out, err = run(capsys, "publish", str(json_file))
    assert code == 0, err
    assert "2027.1.1" in out
    assert "pending, takes effect 2200-01-01T00:00:00Z" in out

    with stored(database) as matrices:
        versions = {v.version: v for v in matrices.versions(reload=True)}
        assert set(versions) == {"2026.11.1", "2026.12.1", "2027.1.1"}  # the default seeds first
        assert str(versions["2026.12.1"].published_by).startswith("supportgate cli")
        assert matrices.current().version == "2026.12.1"


def test_publish_keeps_the_catalogue_tiers_and_alternatives(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CONTRACT 10.3 and 10.6: what a matrix says about hardware and alternatives is published
    as written, and the policies get it prepared."""
    document = yaml.safe_load(DEFAULT_MATRIX.read_text())
    document["engines"]["deepinfer"]["platforms"][0]["tier"] = "preview"
    vllm = {"models": ["DeepSeek-V4.1-Flash"], "host": {"os": ["linux"]}, "provides": []}
    alternatives = [{**document["alternatives"][0], **vllm}, *document["alternatives"][1:]]
    path = matrix_file(
        tmp_path / "matrix.yaml",
        "2026.12.1",
        engines=document["engines"],
        alternatives=alternatives,
    )
    assert run(capsys, "publish", str(path))[0] == 0
    with stored(database) as matrices:
        loaded = matrices.current().loaded
    assert loaded.document["accelerators"] == document["accelerators"]
    assert loaded.document["alternatives"][0] == {**document["alternatives"][0], **vllm}
    prepared = json.loads(loaded.prepared)
    assert prepared["engines"]["deepinfer"]["platforms"]["nvidia"]["sm100"][0]["tier"] == "preview"
    assert prepared["alternative_runtimes"]["vllm"]["judges_service"] is True
    assert prepared["accelerators"]["nvidia"][1]["patterns"] == ["*h100", "*h100[- ]*"]


def test_duplicate_version_is_exit_2(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = matrix_file(tmp_path / "matrix.yaml", "2026.12.1")
    assert run(capsys, "publish", str(path))[0] == 0
    changed = matrix_file(tmp_path / "changed.yaml", "2026.12.1", evidence_max_age_days=7)
    code, out, err = run(capsys, "publish", str(changed))
    assert code == 2
    assert out == ""
    assert "matrix version '2026.12.1' is already published" in err
    assert run(capsys, "publish", str(DEFAULT_MATRIX))[0] == 2  # seeded on first use
    with stored(database) as matrices:
        current = matrices.current()
    assert (current.version, current.loaded.document["evidence_max_age_days"]) == ("2026.12.1", 90)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"evidence_max_age_days": "ninety"}, "$.evidence_max_age_days"),
        ({"engines": {"deepinfer": {"models": [], "platforms": [], "host": {}}}}, "$.engines"),
        (
            {"accelerators": [{"vendor": "nvidia", "arch": "sm90", "models": ["*[ -]H20"]}]},
            "$.accelerators[0].models",
        ),
        (
            {"alternatives": [{"name": "vllm", "platforms": [], "provides": ["kv"]}]},
            "$.alternatives[0].provides[0]",
        ),
    ],
)
def test_bad_file_is_exit_2_naming_file_and_field(
    database: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: dict[str, object],
    field: str,
) -> None:
    path = matrix_file(tmp_path / "matrix.yaml", "2026.12.1", **change)
    code, out, err = run(capsys, "publish", str(path))
    assert code == 2
    assert out == ""
    assert str(path) in err
    assert f"`{field}" in err
    with stored(database) as matrices:
        assert matrices.versions(reload=True) == []  # refused before any write, the seed's too


def test_usage_errors_are_exit_2(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "publish", str(tmp_path / "missing.yaml"))
    assert code == 2
    assert "cannot read matrix file" in err
    assert run(capsys, "publish")[0] == 2
    assert run(capsys)[0] == 2
