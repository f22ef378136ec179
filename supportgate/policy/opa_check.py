"""OPA's compiler on the policies, where an `opa` is on PATH: OPA's type checker is stricter
than regorus, and its capabilities file here leaves out the builtins a bundle may not call
(CONTRACT 11.2). `opa run` takes no capabilities (open-policy-agent/opa#4153): only policies
that passed this check and org_check.py's are served.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .org_check import FORBIDDEN_CALLS, FORBIDDEN_FAMILIES, Problem

OPA_TIMEOUT_S = 60


def capabilities(opa: str) -> dict[str, Any]:
    current = subprocess.run(
        [opa, "capabilities", "--current"], capture_output=True, check=True, timeout=OPA_TIMEOUT_S
    )
    document: dict[str, Any] = json.loads(current.stdout)
    document["builtins"] = [
        builtin
        for builtin in document["builtins"]
        if builtin["name"] not in FORBIDDEN_CALLS
        and not builtin["name"].startswith(FORBIDDEN_FAMILIES)
    ]
    return document


def opa_problems(modules: Sequence[tuple[str, str]], where: Mapping[str, str]) -> list[Problem]:
    """`opa check --capabilities` on the modules (none when no `opa` is on PATH)."""
    opa = shutil.which("opa")
    if opa is None:
        return []
    try:
        return _opa_check(opa, modules, where)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        first = next(iter(where.values()), "the policies")
        return [Problem(first, 1, f"{opa} check could not run ({exc}): fix or remove that opa")]


def _opa_check(
    opa: str, modules: Sequence[tuple[str, str]], where: Mapping[str, str]
) -> list[Problem]:
    with tempfile.TemporaryDirectory(prefix="supportgate-opa-check-") as scratch:
        root = Path(scratch)
        (root / "capabilities.json").write_text(json.dumps(capabilities(opa)))
        for name, text in modules:
            path = root / "policies" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        done = subprocess.run(
            [
                opa,
                "check",
                "--format",
                "json",
                "--capabilities",
                str(root / "capabilities.json"),
                str(root / "policies"),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=OPA_TIMEOUT_S,
        )
        if done.returncode == 0:
            return []
        try:
            errors = json.loads(done.stdout or done.stderr).get("errors", [])
        except json.JSONDecodeError:
            errors = [{"message": (done.stdout + done.stderr).strip()}]
        problems = []
        for error in errors:
            location = error.get("location") or {}
            module = str(location.get("file", "")).removeprefix(f"{root / 'policies'}/")
            problems.append(
                Problem(
                    where.get(module, module or "opa check"),
                    int(location.get("row", 1)),
                    f"OPA refuses it: {error.get('message', error)}",
                )
            )
        return problems
