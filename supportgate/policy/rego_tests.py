"""`supportgate policy test`: the Rego tests of the built-in policies and of organisation bundles.

The engine: `opa test` when an `opa` is on PATH (the engine the built-in tests are written
for, and the one CI runs), regorus otherwise (each `test_` rule evaluated; regorus lacks some
of OPA's `with` semantics, so a few built-in tests may fail under it). Each bundle's tests run
beside the built-in policies (not their tests) and the default matrix at `data.matrix`, one
bundle at a time: the built-in tests describe decisions without any organisation's rules.
The default matrix's prepared form (prepared.py) goes beside it at data.supportgate.prepared.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import regorus
import yaml

from .bundle import PolicyBundle
from .org import OrgBundle
from .prepared import prepared_document

_PACKAGE = re.compile(r"^package\s+(?P<name>\S+)", re.MULTILINE)
_TEST = re.compile(r"^(?P<name>test_\w+)", re.MULTILINE)


def run_tests(policies: PolicyBundle, bundles: Sequence[OrgBundle], *, out: TextIO) -> bool:
    """Run every suite, print each one's result; whether all passed."""
    opa = shutil.which("opa")
    print(f"engine: {'opa test (' + opa + ')' if opa else 'regorus (no opa on PATH)'}", file=out)
    suites = [("builtin", None), *((bundle.name, bundle) for bundle in bundles)]
    passed = True
    for name, bundle in suites:
        if opa:
            ok = _opa_suite(opa, policies, bundle, name=name, out=out)
        else:
            ok = _regorus_suite(policies, bundle, name=name, out=out)
        passed = passed and ok
    return passed


def _opa_suite(
    opa: str, policies: PolicyBundle, bundle: OrgBundle | None, *, name: str, out: TextIO
) -> bool:
    if bundle is None:
        return _opa_run([opa, "test", str(policies.directory)], name=name, out=out)
    with tempfile.TemporaryDirectory(prefix="supportgate-policy-test-") as scratch:
        builtin = Path(scratch) / "builtin"
        for module, text in policies.builtin_modules:
            _write(builtin / module, text)
        _write(builtin / "matrix" / "data.json", json.dumps(_matrix(policies)))
        prepared = prepared_document(_matrix(policies))
        _write(builtin / "supportgate" / "prepared" / "data.json", json.dumps(prepared))
        org = Path(scratch) / "org"
        for module, text in (*bundle.modules, *bundle.tests):
            _write(org / module, text)
        return _opa_run([opa, "test", str(builtin), str(org)], name=name, out=out)


def _opa_run(command: list[str], *, name: str, out: TextIO) -> bool:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = (done.stdout + done.stderr).strip().splitlines()
    failures = [line for line in lines if ": FAIL" in line or ": ERROR" in line]
    summary = [line for line in lines if line.startswith(("PASS:", "FAIL:", "ERROR:"))]
    for line in failures:
        print(f"  {line}", file=out)
    print(f"{name}: {' '.join(summary) or lines[-1] if lines else 'no output'}", file=out)
    return done.returncode == 0


def _regorus_suite(
    policies: PolicyBundle, bundle: OrgBundle | None, *, name: str, out: TextIO
) -> bool:
    engine = regorus.Engine()
    matrix = _matrix(policies)
    prepared = {"prepared": prepared_document(matrix)}
    engine.add_data_json(json.dumps({"matrix": matrix, "supportgate": prepared}))
    if bundle is None:
        tests = _builtin_tests(policies.directory)
        modules = [*policies.builtin_modules, *tests]
    else:
        tests = list(bundle.tests)
        modules = [*policies.builtin_modules, *bundle.modules, *tests]
    for module, text in modules:
        engine.add_policy(module, text)
    total = failed = 0
    for module, text in tests:
        package = _PACKAGE.search(text)
        if package is None:
            continue
        for test in sorted(set(_TEST.findall(text))):
            total += 1
            rule = f"data.{package['name']}.{test}"
            try:
                ok = engine.eval_rule(rule) is True
            except RuntimeError as exc:
                ok = False
                print(
                    f"  {rule}: ERROR {str(exc).split(chr(10) + 'Stack backtrace:')[0]}", file=out
                )
            else:
                if not ok:
                    print(f"  {rule}: FAIL ({module})", file=out)
            failed += not ok
    print(f"{name}: PASS: {total - failed}/{total}", file=out)
    return failed == 0 and total > 0


def _builtin_tests(directory: Path) -> list[tuple[str, str]]:
    return [
        (path.relative_to(directory).as_posix(), path.read_text(encoding="utf-8"))
        for path in sorted(directory.rglob("*_test.rego"))
    ]


def _matrix(policies: PolicyBundle) -> dict[str, Any]:
    matrix: dict[str, Any] = yaml.safe_load(
        policies.default_matrix_path.read_text(encoding="utf-8")
    )
    return matrix


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
