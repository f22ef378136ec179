"""`supportgate check` on one file: CPU time of a fresh process against a bare-import baseline.

Run: python -m bench.bench_cli_startup [--runs N]
The baseline is `python -c "import msgspec, regorus"`: the two libraries a check cannot do
without. Each case runs in a fresh process, `--runs` times, the cases taking turns so that a
busy machine slows them alike; a case's cost is the median CPU time (user + system) of its
process, read from the kernel's accounting of waited-for children (getrusage), start-up and
exit included. The target (issue 10) is `check` at most 3x the baseline.

The children keep their bytecode (in a temporary PYTHONPYCACHEPREFIX, whatever
PYTHONDONTWRITEBYTECODE says), as an installed wheel has it. Without it, an editable checkout
compiles every supportgate module from source at each start: ~30 ms more per `check`.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.common import EXAMPLE_TIME, EXAMPLES, Measurement, table


def child_cpu_seconds(command: Sequence[str], env: Mapping[str, str]) -> float:
    """User + system CPU seconds of one run of `command` (which must exit 0 or 1)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    finished = subprocess.run(command, env=env, capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if finished.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {finished.returncode}: {finished.stderr!r}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    manifest: Path = sorted(EXAMPLES.glob("hw-*.yaml"))[0]
    check = [sys.executable, "-m", "supportgate.cli", "check", "--at", EXAMPLE_TIME, str(manifest)]
    cases = {
        '`python -c "import msgspec, regorus"` (baseline)': [
            sys.executable,
            "-c",
            "import msgspec, regorus",
        ],
        "`python -c pass` (the interpreter alone)": [sys.executable, "-c", "pass"],
        f"`supportgate check {manifest.name}`": check,
    }
    samples: dict[str, list[float]] = {name: [] for name in cases}
    with tempfile.TemporaryDirectory() as bytecode:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = bytecode
        for command in cases.values():  # warm-up: the page cache and the bytecode cache
            child_cpu_seconds(command, env)
        for _ in range(args.runs):
            for name, command in cases.items():
                samples[name].append(child_cpu_seconds(command, env))
    rows = [Measurement(name, statistics.median(values)) for name, values in samples.items()]
    print(table(f"CLI start-up, CPU time per process (median of {args.runs})", rows, rows[0]))


if __name__ == "__main__":
    main()
