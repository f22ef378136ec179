"""Building and running the Go verifier (tests/tlog_verifier); tests/conftest.py builds it
once per session (the `go_verifier` fixture)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ..services import require_or_skip

VERIFIER_MODULE = Path(__file__).resolve().parents[1] / "tlog_verifier"
GO_BUILD_TIMEOUT_S = 300


def build_verifier(directory: Path) -> Path:
    """The verifier, built into `directory`; skips without `go` (fails in CI)."""
    go = shutil.which("go")
    if go is None:
        require_or_skip("SUPPORTGATE_REQUIRE_OPA", "no `go` on PATH to build tests/tlog_verifier")
    assert go is not None
    binary = directory / "tlog_verifier"
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


def run_verifier(
    binary: Path, fixture: dict[str, Any], tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    """The Go verifier on `fixture` (its JSON format: tests/tlog_verifier/main.go)."""
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(fixture))
    return subprocess.run(
        [str(binary), "-fixture", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
