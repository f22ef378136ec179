"""`check --find-hardware`: the pools a deployment names, found among the repository's own files
(docs/ci.md, the pre-commit hook). The pools found judge, and are not reported: they are not
the commit's. A file there that does not decode is passed over: it is the business of the
commit that changes it."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from supportgate.errors import ManifestError
from supportgate.manifests import HardwareManifest, format_of
from supportgate.manifests.decode import decode_supportgate_documents
from supportgate.policy.inputs import hardware_ref
from supportgate.reports import Problem

from .sourced import SourcedManifest

PATTERNS = ("*.yaml", "*.yml", "*.json")
GIT_TIMEOUT_S = 60


@dataclass(frozen=True, slots=True)
class Found:
    items: list[SourcedManifest]
    """The manifests that can be judged: those whose pool is nowhere are `problems`."""
    pools: dict[str, HardwareManifest]
    problems: list[Problem]


def find_hardware(items: Sequence[SourcedManifest]) -> Found:
    here = os.getcwd()
    given = {i.manifest.metadata.name for i in items if isinstance(i.manifest, HardwareManifest)}
    wanted = {ref for item in items if (ref := hardware_ref(item.manifest))} - given
    if not wanted:
        return Found(list(items), {}, [])
    files, where = _tracked_files(here, {os.path.realpath(item.source) for item in items})
    pools = _pools(files, wanted)
    kept: list[SourcedManifest] = []
    problems: list[Problem] = []
    for item in items:
        ref = hardware_ref(item.manifest)
        if ref is None or ref in given or ref in pools:
            kept.append(item)
            continue
        problems.append(
            Problem(
                f"{item.source}: {item.manifest.kind} {item.manifest.metadata.name!r}: "
                f"hardware.ref {ref!r} names no HardwareManifest among the files checked, "
                f"nor among {where} - at `$.spec.hardware.ref`",
                source=item.source,
                field="$.spec.hardware.ref",
                text=item.text,
                document_index=item.document_index,
            )
        )
    return Found(kept, pools, problems)


def _tracked_files(cwd: str, skip: Collection[str]) -> tuple[list[Path], str]:
    """The YAML and JSON files git tracks under `cwd` (outside git: none), and a phrase
    saying where that is."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", *PATTERNS],  # noqa: S607 - the user's git
            cwd=cwd,
            capture_output=True,
            check=True,
            timeout=GIT_TIMEOUT_S,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return [], f"the repository's files (none: {cwd} is not in a git repository)"
    names = [name for name in listed.decode("utf-8", "replace").split("\0") if name]
    files = [Path(cwd, name) for name in names]
    where = f"the {len(files)} YAML and JSON files git tracks under {cwd}"
    return [path for path in files if os.path.realpath(path) not in skip], where


def _pools(files: Sequence[Path], wanted: set[str]) -> dict[str, HardwareManifest]:
    pools: dict[str, HardwareManifest] = {}
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"HardwareManifest" not in data:
            continue
        try:
            found, _ = decode_supportgate_documents(data, fmt=format_of(path.name))
        except ManifestError:
            continue
        for _, manifest in found:
            name = manifest.metadata.name
            if isinstance(manifest, HardwareManifest) and name in wanted:
                pools.setdefault(name, manifest)
    return pools
