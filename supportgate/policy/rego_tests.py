"""`supportgate policy test` (docs/organisation-policies.md). Each bundle's tests run beside the
built-in policies but not their tests, which describe decisions without organisation rules.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import regorus

from .bundle import PolicyBundle
from .org import OrgBundle
from .rego_parse import ParsedModule, RegoSyntaxError, parse_module, regorus_message

OPA_ONLY = "opa"


def run_tests(policies: PolicyBundle, bundles: Sequence[OrgBundle], *, out: TextIO) -> bool:
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
        matrix = policies.default_matrix()
        _write(builtin / "matrix" / "data.json", matrix.canonical.decode())
        _write(builtin / "supportgate" / "prepared" / "data.json", matrix.prepared.decode())
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
    engine.add_data_json(policies.default_matrix().data_json())
    if bundle is None:
        tests = _builtin_tests(policies.directory)
        modules = [*policies.builtin_modules, *tests]
    else:
        tests = list(bundle.tests)
        modules = [*policies.builtin_modules, *bundle.modules, *tests]
    for module, text in modules:
        engine.add_policy(module, text)
    total = failed = skipped = 0
    for module, text in tests:
        try:
            parsed = parse_module(module, text)
        except RegoSyntaxError as exc:
            print(f"  {module}:{exc.line}: ERROR {exc.message}", file=out)
            failed += 1
            continue
        for test, reason in _tests(parsed):
            rule = f"data.{parsed.package}.{test}"
            if reason is not None:
                skipped += 1
                print(f"  {rule}: SKIP (only OPA runs it: {reason})", file=out)
                continue
            total += 1
            try:
                ok = engine.eval_rule(rule) is True
            except RuntimeError as exc:
                ok = False
                print(f"  {rule}: ERROR {regorus_message(exc)}", file=out)
            else:
                if not ok:
                    print(f"  {rule}: FAIL ({module})", file=out)
            failed += not ok
    skips = f" ({skipped} skipped: only OPA runs them, `opa test`)" if skipped else ""
    print(f"{name}: PASS: {total - failed}/{total}{skips}", file=out)
    return failed == 0 and total > 0


def _tests(module: ParsedModule) -> list[tuple[str, str | None]]:
    """Each with why only OPA can run it (None: both engines can)."""
    reasons: dict[str, str | None] = {}
    for rule in module.rules:
        if not rule.name.startswith("test_"):
            continue
        custom = (rule.metadata or {}).get("custom")
        custom = custom if isinstance(custom, dict) else {}
        only_opa = custom.get("engine") == OPA_ONLY
        reason = " ".join(str(custom.get("reason") or "no reason given").split())
        if only_opa or rule.name not in reasons:
            reasons[rule.name] = reason if only_opa else None
    return sorted(reasons.items())


def _builtin_tests(directory: Path) -> list[tuple[str, str]]:
    return [
        (path.relative_to(directory).as_posix(), path.read_text(encoding="utf-8"))
        for path in sorted(directory.rglob("*_test.rego"))
    ]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
