from __future__ import annotations

import pytest


@pytest.fixture
def no_bundles_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line as on a machine that names no organisation bundle or policy tree."""
    monkeypatch.delenv("SUPPORTGATE_POLICY_BUNDLES", raising=False)
    monkeypatch.delenv("SUPPORTGATE_POLICY_DIR", raising=False)
