"""A command line argparse refuses is exit 2, under the usage of the command it is about."""

from __future__ import annotations

import pytest

from supportgate.cli import main

pytestmark = pytest.mark.fast

REFUSED = [
    (
        ["keys", "create", "--role", "bogus", "--name", "x"],
        "supportgate keys create [-h]",
        "--role",
    ),
    (
        ["keys", "create", "--role", "ci", "--name", "x", "--extra"],
        "supportgate keys create",
        "--extra",
    ),
    (["keys", "create", "--role", "ci"], "supportgate keys create [-h]", "--name"),
    (["check", "--bogus", "a.yaml"], "supportgate check [-h]", "--bogus"),
    (["check"], "supportgate check [-h]", "FILE"),
    (["collect", "--name", "pool", "--nodes", "many"], "supportgate collect [-h]", "--nodes"),
    (["db", "upgrade", "now"], "supportgate db upgrade [-h]", "now"),
    (["db", "downgrade"], "supportgate db [-h]", "downgrade"),
    (["matrix"], "supportgate matrix [-h]", "required: COMMAND"),
    (["audit", "verify", "--all"], "supportgate audit verify [-h]", "--all"),
    (["reevaluate", "--now"], "supportgate reevaluate [-h]", "--now"),
    (["serve", "--port", "eighty"], "supportgate serve [-h]", "--port"),
    (["--bogus", "check", "a.yaml"], "supportgate [-h]", "--bogus"),  # the top level's own
    (["bogus"], "supportgate [-h]", "bogus"),
]


@pytest.mark.parametrize(
    ("argv", "usage", "named"), REFUSED, ids=[" ".join(a) for a, _, _ in REFUSED]
)
def test_a_refused_command_line_shows_its_own_usage(
    argv: list[str], usage: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: {usage}")
    (error,) = [line for line in err.splitlines() if line.startswith("supportgate: error: ")]
    assert named in error


@pytest.mark.parametrize(
    "argv", [[], ["db"], ["keys"], ["matrix"], ["audit"]], ids=lambda argv: " ".join(argv) or "-"
)
def test_a_missing_command_is_named_command_not_argparses_dest(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "supportgate: error: the following arguments are required: COMMAND\n" in err
    assert "_command" not in err
