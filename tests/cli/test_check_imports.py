"""`supportgate check` on a file loads no database, HTTP or logging code, nor the standard
modules only other commands need: it runs in every CI job; SQLAlchemy alone once tripled its
start-up, and structlog (which brings rich) once added half of it again
(bench/bench_cli_startup.py measures it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..server import clean_env

# The top-level packages of the database, web and logging stacks.
HEAVY = (
    "sqlalchemy",
    "sqlmodel",
    "alembic",
    "litestar",
    "uvicorn",
    "psycopg",
    "httpx",
    "requests",
    "structlog",
    "cryptography",  # the log's signatures: supportgate/tlog/__init__.py loads them on first use
    # Standard modules `check` once loaded for other commands' sake (socket for a hostname,
    # shutil through importlib.resources and argparse's terminal width, expat for JUnit):
    # together a quarter of its start-up, which is held to 3x its engine's import.
    "socket",
    "shutil",
    "tempfile",
    "tarfile",
    "subprocess",
    "xml",
    "importlib.resources",
)

# Runs the real command line in a fresh interpreter; prints what got imported on stderr, as
# the check's report takes stdout.
PROGRAM = """
import json, sys
from supportgate.cli import main
code = main(sys.argv[1:])
heavy = sorted(
    name for name in sys.modules if any(name == h or name.startswith(h + ".") for h in {heavy!r})
)
print(json.dumps({{"code": code, "heavy": heavy}}), file=sys.stderr)
"""


def _run_in_fresh_process(*argv: str, **env: str) -> tuple[int, list[str]]:
    """The command's exit code, and the heavy modules it imported."""
    finished = subprocess.run(
        [sys.executable, "-c", PROGRAM.format(heavy=set(HEAVY)), *argv],
        env=clean_env(**env),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    outcome = json.loads(finished.stderr.strip().splitlines()[-1])
    return outcome["code"], outcome["heavy"]


def test_check_on_one_file_imports_no_database_or_http_code(examples_dir: Path) -> None:
    code, heavy = _run_in_fresh_process("check", str(examples_dir / "hw-b200-pool.yaml"))
    assert code == 0
    assert heavy == []


def test_the_probe_sees_what_a_database_command_imports(tmp_path: Path) -> None:
    """The same probe on `audit verify`, which needs SQLAlchemy: the test above can fail."""
    missing = f"sqlite:///{tmp_path / 'missing.db'}"
    code, heavy = _run_in_fresh_process("audit", "verify", SUPPORTGATE_DATABASE_URL=missing)
    assert code == 2  # refused: the file does not exist
    assert "sqlalchemy" in heavy
