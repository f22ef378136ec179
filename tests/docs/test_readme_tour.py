"""The README's tour, run as a stranger would paste it: its shell blocks between `<!-- tour -->`
and `<!-- /tour -->`, in order, in one bash with `set -euo pipefail`, from the checkout, with the
checkout's .venv (./scripts/serve made it), on a free port (`PORT`) and a fresh temporary
directory (`TMPDIR`, where the tour's `mktemp -d` puts its database).

A command that fails fails the test, and so does a query that promises data and answers none:
`curl` is wrapped so that an empty list, an empty page or a CSV of headers only counts as a
failure (its own `-f` already fails on an HTTP error). The tour must leave the checkout as it
found it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from ..server import clean_env
from ..services import free_port

ROOT = Path(__file__).resolve().parents[2]
GIT = shutil.which("git") or "git"
BASH = shutil.which("bash") or "bash"
TOUR_LIMIT_S = 300.0
"""A safety net for a hung tour, never a timing expectation: it takes about 20 s."""

PROMISES_DATA = r"""
import json, sys

body = sys.stdin.read()
url = next((arg for arg in sys.argv[1:] if arg.startswith("http")), "")
if "format=csv" in url:
    answered = len([line for line in body.splitlines() if line.strip()]) > 1
else:
    try:
        document = json.loads(body)
    except ValueError:
        answered = bool(body.strip())
    else:
        items = document.get("items") if isinstance(document, dict) else document
        answered = document not in ({}, []) and items != []
if not answered:
    sys.exit(f"the tour's query {url} answered no data: {body[:300]!r}")
"""

PRELUDE = """set -euo pipefail
curl() {
  local body
  body="$(command curl "$@")" || return
  printf '%s\\n' "$body"
  printf '%s' "$body" | "$TOUR_TEST_PYTHON" "$TOUR_TEST_PROMISES_DATA" "$@"
}
"""


def tour_blocks(readme: str) -> list[str]:
    _, opened, rest = readme.partition("<!-- tour -->")
    tour, closed, _ = rest.partition("<!-- /tour -->")
    assert opened, "README.md marks no tour's start (<!-- tour -->)"
    assert closed, "README.md marks no tour's end (<!-- /tour -->)"
    return re.findall(r"^```sh\n(.*?)^```$", tour, re.DOTALL | re.MULTILINE)


def git_status() -> str | None:
    done = subprocess.run(
        [GIT, "--no-optional-locks", "status", "--porcelain", "--untracked-files=all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout if done.returncode == 0 else None


def test_tour_blocks_are_found() -> None:
    blocks = tour_blocks((ROOT / "README.md").read_text())
    assert len(blocks) >= 5
    assert "./scripts/serve" in blocks[0]
    assert "./scripts/tour-seed" in "".join(blocks)


def test_the_readme_tour_runs_as_written(tmp_path: Path) -> None:
    venv_supportgate = ROOT / ".venv" / "bin" / "supportgate"
    assert venv_supportgate.is_file(), (
        f"the tour runs {venv_supportgate}: make it with ./scripts/serve or ./scripts/test"
    )
    script = tmp_path / "tour.sh"
    script.write_text(PRELUDE + "\n".join(tour_blocks((ROOT / "README.md").read_text())))
    promises_data = tmp_path / "promises_data.py"
    promises_data.write_text(PROMISES_DATA)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = clean_env(
        PORT=str(free_port()),
        TMPDIR=str(scratch),
        TOUR_TEST_PYTHON=sys.executable,
        TOUR_TEST_PROMISES_DATA=str(promises_data),
    )
    before = git_status()

    tour = subprocess.Popen(
        [BASH, str(script)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = tour.communicate(timeout=TOUR_LIMIT_S)
    finally:
        # The server the tour started, if it stopped before its `kill "$SERVER"`.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(tour.pid, signal.SIGKILL)
        tour.wait()

    logs = "\n".join(
        f"--- {log}\n{log.read_text(errors='replace')[-3000:]}"
        for log in scratch.glob("*/serve.log")
    )
    assert tour.returncode == 0, (
        f"the tour failed (exit {tour.returncode}); its output ends:\n{output[-4000:]}\n{logs}"
    )
    assert "holds" in output  # verify-receipt's last word: the tour went to its end
    assert git_status() == before, "the tour changed the checkout"
