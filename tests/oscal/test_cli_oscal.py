"""`supportgate report oscal --as-of T` on SQLite and PostgreSQL: the document GET
/v1/reports/oscal answers for the same T, byte for byte, which compliance-trestle's models
load; `--output FILE`; a bad `--as-of` is exit 2 naming it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from trestle.oscal.assessment_results import Model

from supportgate.cli import main

from ..api import Api, running_api
from ..api_support import post_examples
from ..signing import key_env


@pytest.fixture
def fleet_api(db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    """The API with the examples posted; the CLI on the same database and key."""
    with running_api(db_url) as api:
        post_examples(api)
        assert api.runtime.reevaluation.wait_idle()
        monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", db_url)
        for variable, value in key_env(db_url).items():
            monkeypatch.setenv(variable, value)
        yield api


def test_the_command_prints_the_document_the_api_answers(
    fleet_api: Api, capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    # a time after the examples were recorded: the fleet at it is what they made
    as_of = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    answered = fleet_api.client.get(
        "/v1/reports/oscal", params={"as_of": as_of}, headers=fleet_api.headers("procurement")
    )
    assert answered.status_code == 200, answered.text
    capsysbinary.readouterr()  # the API's request log

    assert main(["report", "oscal", "--as-of", as_of]) == 0
    printed = capsysbinary.readouterr().out
    assert printed == answered.content
    results = Model.model_validate_json(printed).assessment_results
    tracked = fleet_api.client.get(
        "/v1/manifests", params={"limit": 500}, headers=fleet_api.headers("procurement")
    ).json()["items"]
    assert len(results.results[0].observations or []) == len(tracked) > 0

    out = tmp_path / "fleet.oscal.json"
    assert main(["report", "oscal", "--as-of", as_of, "--output", str(out)]) == 0
    assert out.read_bytes() == printed
    assert str(out) in capsysbinary.readouterr().out.decode()


@pytest.mark.parametrize("as_of", ["2026-11-30", "3000-01-01T00:00:00Z"])
def test_a_bad_as_of_is_exit_2_naming_it(
    fleet_api: Api, capsys: pytest.CaptureFixture[str], as_of: str
) -> None:
    assert main(["report", "oscal", "--as-of", as_of]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--as-of" in captured.err
