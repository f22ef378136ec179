from __future__ import annotations

from pathlib import Path

import pytest

from ..matrix_upstreams import GitRepo


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """A git repository to publish matrices from (tests/matrix_upstreams.py)."""
    return GitRepo(tmp_path / "repo")
