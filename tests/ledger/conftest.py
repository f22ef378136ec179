"""The Go verifier (tests/tlog_verifier), built once per test session for the `go` tests."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..services import require_or_skip

VERIFIER_MODULE = Path(__file__).resolve().parents[1] / "tlog_verifier"
GO_BUILD_TIMEOUT_S = 300


@pytest.fixture(scope="session")
def go_verifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = shutil.which("go")
    if go is None:
        require_or_skip("SUPPORTGATE_REQUIRE_OPA", "no `go` on PATH to build tests/tlog_verifier")
    assert go is not None
    binary = tmp_path_factory.mktemp("go") / "tlog_verifier"
    # go.sum is committed: -mod=readonly builds exactly the pinned modules, or fails.
    env = {**os.environ, "GOFLAGS": "-mod=readonly -buildvcs=false"}
    subprocess.run(
        [go, "build", "-o", str(binary), "."],
        cwd=VERIFIER_MODULE,
        env=env,
        check=True,
        timeout=GO_BUILD_TIMEOUT_S,
    )
    return binary
