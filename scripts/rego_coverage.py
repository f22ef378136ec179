"""Run `opa test --coverage` over the policies and fail below a minimum line coverage.

Usage: python scripts/rego_coverage.py POLICY_DIR --min PERCENT
Prints the test summary and each file's coverage, lowest first.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("policy_dir")
    parser.add_argument("--min", type=float, required=True, dest="minimum")
    args = parser.parse_args()
    opa = shutil.which("opa")
    if opa is None:
        print("opa is not on PATH", file=sys.stderr)
        return 2
    verbose = subprocess.run(
        [opa, "test", args.policy_dir], capture_output=True, text=True, check=False
    )
    print(verbose.stdout.strip().splitlines()[-1] if verbose.stdout.strip() else verbose.stderr)
    if verbose.returncode != 0:
        print(verbose.stdout, verbose.stderr, file=sys.stderr)
        return 1
    report = subprocess.run(
        [opa, "test", "--coverage", "--format", "json", args.policy_dir],
        capture_output=True,
        text=True,
        check=True,
    )
    coverage = json.loads(report.stdout)
    files = coverage.get("files", {})
    for name, info in sorted(files.items(), key=lambda item: item[1].get("coverage", 0)):
        print(f"  {info.get('coverage', 0):6.2f}%  {name}")
    total = float(coverage.get("coverage", 0))
    print(f"rego line coverage: {total:.2f}% (minimum {args.minimum}%)")
    return 0 if total >= args.minimum else 1


if __name__ == "__main__":
    sys.exit(main())
