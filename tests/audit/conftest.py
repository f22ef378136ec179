"""Fixtures of the audit tests: a signed history to verify and tamper with, an API whose
checkpoints come only when asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ..api import Api, running_api
from ..audit_history import History, build, copied
from ..services import temporary_database


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def signed_history(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[History]:
    """The signed history (tests/audit_history.py), built once per module and backend."""
    directory = tmp_path_factory.mktemp(f"history-{request.param}")
    if request.param == "sqlite":
        yield build(f"sqlite:///{directory / 'supportgate.db'}", directory)
        return
    with temporary_database(request.getfixturevalue("postgres_url")) as url:
        yield build(url, directory)


@pytest.fixture
def history(
    signed_history: History, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[History]:
    """A copy of the signed history for this test; the CLI on it, with the service's key."""
    with copied(signed_history, tmp_path) as copy:
        monkeypatch.setenv("SUPPORTGATE_DATABASE_URL", copy.url)
        monkeypatch.setenv("SUPPORTGATE_SIGNING_KEY_FILE", str(copy.key_file))
        yield copy


@pytest.fixture
def quiet_api(db_url: str) -> Iterator[Api]:
    """The API whose checkpointer never signs on its timer (only at start, stop and sweeps)."""
    with running_api(db_url, checkpoint_interval=3600.0) as running:
        yield running
