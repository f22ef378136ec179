"""What the CI-kit tests share: this checkout copied as a git repository (what a CI system or
pre-commit would fetch), and small manifests written inline: a B200 pool, a deployment on it
that passes, one that is rejected."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GIT_IDENTITY = ["-c", "user.name=supportgate tests", "-c", "user.email=tests@supportgate.invalid"]

POOL_NAME = "b200-pool"
B200_POOL = f"""\
apiVersion: supportgate/v1
kind: HardwareManifest
metadata: {{name: {POOL_NAME}, owner: infra}}
spec:
  accelerator: {{vendor: nvidia, model: B200-SXM-180GB, arch: sm100, memory_gib: 180, per_node: 8}}
  nodes: 9
  interconnect: {{scale_up_domain: 72, fabric: nvlink5}}
  toolkit: {{name: cuda, version: "13.0.1"}}
  driver: "580.65.06"
  os: {{name: linux, distribution: ubuntu-24.04, kernel: "6.8.0"}}
  compiler: {{name: gcc, version: "13.3.0"}}
  python: "3.12.7"
"""


def deployment(name: str, *, decode_gpus: int) -> str:
    """An offline production deployment on the B200 pool; more than 72 GPUs in all (9 nodes
    of 8) is rejected by `topology.capacity`."""
    return f"""\
apiVersion: supportgate/v1
kind: DeploymentManifest
metadata: {{name: {name}, owner: ml-platform}}
spec:
  hardware: {{ref: {POOL_NAME}}}
  engine: {{name: deepinfer, version: "1.0.0", commit: 3f2a9c1}}
  model: {{name: DeepSeek-V4.1-Flash, quantization: fp8}}
  stage: production
  mode: offline
  topology: {{prefill_gpus: 4, decode_gpus: {decode_gpus}}}
  evidence:
    build: {{status: passed, at: "2026-11-20T10:00:00Z", ref: "ci://builds/901"}}
"""


PASSING_DEPLOYMENT = deployment("v41-flash-b200-batch", decode_gpus=64)
REJECTED_DEPLOYMENT = deployment("v41-flash-b200-oversized", decode_gpus=80)
REJECTED_RULE = "topology.capacity"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args],  # noqa: S607 - git from PATH, as CI and pre-commit use it
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def copy_of_this_checkout(destination: Path) -> Path:
    """The checkout's files as they are now (tracked and new, not ignored: uncommitted edits
    included), copied to `destination`."""
    listed = git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is left out
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def committed_repository(root: Path) -> str:
    """Make `root` a git repository with everything in it committed; the commit's id."""
    git(root, "init", "--quiet")
    git(root, "add", "--all")
    git(root, "commit", "--quiet", "--no-verify", "--message", "supportgate under test")
    return git(root, "rev-parse", "HEAD")
