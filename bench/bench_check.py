"""`supportgate check` on 1,000 manifest files against `opa eval` run once per file.

Run: python -m bench.bench_check [--files N] [--opa-sample N]
The conftest-style baseline starts `opa eval` once per file, with the policy input already
built (hardware resolved), so it measures only OPA's own per-file cost. `opa eval` is timed on a
sample of the files and reported per file; `supportgate check` runs once over all of them, in
a fresh process (start-up included).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from bench.common import EXAMPLE_TIME, EXAMPLES, Measurement, example_manifests, table
from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import HardwareManifest, decode_manifest
from supportgate.matrix import load_matrix_file, prepare
from supportgate.policy import EmbeddedEngine, PolicyBundle
from tests.services import find_opa

_NAME = re.compile(r"(metadata: \{name: )([a-z0-9-]+)")


def write_files(directory: Path, count: int) -> list[Path]:
    """The hardware examples once, then renamed copies of the deployment examples."""
    hardware = sorted(EXAMPLES.glob("hw-*.yaml"))
    deployments = sorted(EXAMPLES.glob("dep-*.yaml"))
    paths = []
    for source in hardware:
        target = directory / source.name
        target.write_bytes(source.read_bytes())
        paths.append(target)
    for index in range(count - len(hardware)):
        source = deployments[index % len(deployments)]
        text = _NAME.sub(rf"\g<1>\g<2>-{index:04d}", source.read_text())
        target = directory / f"{index:04d}-{source.name}"
        target.write_text(text)
        paths.append(target)
    return paths


def write_opa_inputs(paths: list[Path], directory: Path) -> list[Path]:
    bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
    evaluator = Evaluator(
        EmbeddedEngine(bundle), prepare(load_matrix_file(bundle.default_matrix_path))
    )
    hardware, _ = example_manifests()
    pools = {m.metadata.name: m for m in hardware if isinstance(m, HardwareManifest)}
    at = datetime.fromisoformat(EXAMPLE_TIME)
    inputs = []
    for path in paths:
        manifest = decode_manifest(path.read_bytes(), fmt="yaml", source=path.name)
        target = directory / f"{path.stem}.input.json"
        target.write_bytes(
            evaluator.policy_input(Subject(manifest), evaluated_at=at, hardware=pools.get).canonical
        )
        inputs.append(target)
    return inputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--opa-sample", type=int, default=100)
    args = parser.parse_args()
    opa = find_opa()
    if opa is None:
        raise SystemExit("no opa binary: run scripts/install --with-opa")
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        paths = write_files(directory, args.files)
        inputs = write_opa_inputs(paths[: args.opa_sample], directory)
        command = [
            sys.executable,
            "-m",
            "supportgate.cli",
            "check",
            "--format",
            "json",
            "--at",
            EXAMPLE_TIME,
        ]
        start = time.perf_counter()
        finished = subprocess.run([*command, *map(str, paths)], capture_output=True, check=False)
        check_s = time.perf_counter() - start
        if finished.returncode not in (0, 1):
            raise SystemExit(finished.stderr.decode())
        start = time.perf_counter()
        for input_path in inputs:
            subprocess.run(
                [
                    opa,
                    "eval",
                    "--format",
                    "json",
                    "-d",
                    str(DEFAULT_POLICY_DIR),
                    "-i",
                    str(input_path),
                    "data.supportgate.decision.result",
                ],
                capture_output=True,
                check=True,
            )
        opa_s = time.perf_counter() - start
    rows = [
        Measurement(
            f"`opa eval` once per file ({len(inputs)} files, baseline)", opa_s / len(inputs)
        ),
        Measurement(
            f"`supportgate check` on {len(paths)} files, one process", check_s / len(paths)
        ),
    ]
    print(table("CLI gate, per manifest file", rows, rows[0]))


if __name__ == "__main__":
    main()
