"""`supportgate audit replay` on SQLite and PostgreSQL: every example decision replays (exit 0);
an edited decision is reported by id and what differs (exit 1); a named decision that cannot
be replayed here is exit 2; --since narrows the decisions replayed."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from supportgate.cli import main

from ..api import Api
from ..api_support import post_examples


@pytest.fixture
def examples(api: Api, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    bodies = post_examples(api)
    assert api.runtime.reevaluation.wait_idle()
    monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", api.runtime.settings.database_url)
    return bodies


def replay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["audit", "replay", *args])
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).splitlines()


def test_replay_reports_each_decision_that_differs(
    api: Api, examples: list[dict[str, object]], capsys: pytest.CaptureFixture[str]
) -> None:
    total = len(examples)  # one decision each (hardware first: no sweep follows)
    assert replay(capsys) == (
        0,
        [f"replayed {total}: {total} reproduced, 0 differ, 0 cannot be replayed here"],
    )
    first, second = examples[0], examples[1]
    edited = "rejected" if first["verdict"] != "rejected" else "supported"
    with api.runtime.db.begin() as connection:
        connection.execute(
            text("UPDATE decisions SET verdict = :verdict WHERE id = :id"),
            {"verdict": edited, "id": first["id"]},
        )
        connection.execute(
            text("UPDATE decisions SET policy_input = policy_input || ' ' WHERE id = :id"),
            {"id": second["id"]},
        )
    code, lines = replay(capsys)
    assert code == 1
    assert lines == [
        f"decision {first['id']} differs: verdict {edited} -> {first['verdict']}",
        f"decision {second['id']} differs: its stored policy input does not match its input_digest",
        f"replayed {total}: {total - 2} reproduced, 2 differ, 0 cannot be replayed here",
    ]
    code, lines = replay(capsys, str(first["id"]))
    assert (code, lines[-1]) == (1, "replayed 1: 0 reproduced, 1 differ, 0 cannot be replayed here")


def test_replay_of_named_and_recent_decisions(
    api: Api, examples: list[dict[str, object]], capsys: pytest.CaptureFixture[str]
) -> None:
    last = examples[-1]
    assert replay(capsys, str(last["id"])) == (
        0,
        ["replayed 1: 1 reproduced, 0 differ, 0 cannot be replayed here"],
    )
    code, lines = replay(capsys, str(last["id"]), "no-such-id")
    assert code == 2
    assert lines == [
        "decision no-such-id: cannot replay here: decision: no decision has id 'no-such-id'",
        "replayed 1: 1 reproduced, 0 differ, 1 cannot be replayed here",
    ]
    assert replay(capsys, "--since", str(last["evaluated_at"]))[1] == [
        "replayed 1: 1 reproduced, 0 differ, 0 cannot be replayed here"
    ]
    assert replay(capsys, "--since", "2999-01-01T00:00:00Z") == (
        0,
        ["replayed 0: 0 reproduced, 0 differ, 0 cannot be replayed here"],
    )
    code, lines = replay(capsys, "--since", "yesterday")
    assert code == 2
    assert "--since: not an RFC 3339 date-time" in lines[-1]
    code, lines = replay(capsys, "--since", "2999-01-01T00:00:00Z", str(last["id"]))
    assert code == 2
    assert "give decision ids or --since, not both" in lines[-1]
