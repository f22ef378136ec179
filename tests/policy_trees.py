"""A policy tree from another commit: the baseline the benches compare the tree with, and the
policies a fleet is recorded under before the service moves to today's (test_policy_upgrade).

It is read from git rather than kept as a frozen copy: the tree as it stood at BASELINE_REV
(the tree before CONTRACT section 10) unless the caller names another commit.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

from supportgate.config import DEFAULT_POLICY_DIR

BASELINE_REV = "14a6c90"  # the policy tree before CONTRACT section 10 (issue 21)
_CHECKOUT = DEFAULT_POLICY_DIR.parent
GIT = shutil.which("git") or "git"


def baseline_tree(rev: str, directory: Path) -> Path:
    """Writes the policies/ tree of commit `rev` below `directory` and returns its root."""
    relative = DEFAULT_POLICY_DIR.relative_to(_CHECKOUT).as_posix()
    archive = subprocess.run(
        [GIT, "-C", str(_CHECKOUT), "archive", "--format=tar", rev, relative],
        check=True,
        capture_output=True,
    ).stdout
    target = directory / f"baseline-{rev}"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return target / relative
