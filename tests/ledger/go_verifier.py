"""Running the Go verifier that conftest.py builds (the `go_verifier` fixture)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any


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
