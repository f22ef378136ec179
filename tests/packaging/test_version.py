"""`supportgate --version` prints the installed distribution's version."""

from __future__ import annotations

from importlib.metadata import version

import pytest

import supportgate
from supportgate.cli import main

pytestmark = pytest.mark.fast


def test_version_prints_the_installed_version_and_exits_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    printed = capsys.readouterr()
    assert printed.out == f"supportgate {version('supportgate')}\n"
    assert printed.err == ""


def test_the_installed_version_is_the_packages_own() -> None:
    """pyproject.toml reads the version from supportgate.__version__ (a stale editable install
    fails here: reinstall it)."""
    assert version("supportgate") == supportgate.__version__
