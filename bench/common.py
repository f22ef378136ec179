"""Timing helpers for the benchmarks: medians over repeats, ratios within one run, a table."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from supportgate.manifests import Manifest, decode_manifest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "manifests"
EXAMPLE_TIME = "2026-11-30T00:00:00Z"  # the evaluated_at of examples/expected.yaml


@dataclass(frozen=True, slots=True)
class Measurement:
    name: str
    seconds_per_op: float

    @property
    def ops_per_second(self) -> float:
        return 1.0 / self.seconds_per_op


def measure(
    name: str, operation: Callable[[], object], *, ops: int, repeats: int = 7
) -> Measurement:
    """Median seconds per op over `repeats` runs of `operation` (which performs `ops` ops)."""
    operation()  # warm-up: compile, caches, connections
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        operation()
        samples.append((time.perf_counter() - start) / ops)
    return Measurement(name=name, seconds_per_op=statistics.median(samples))


def table(title: str, rows: Sequence[Measurement], baseline: Measurement) -> str:
    lines = [
        f"### {title}",
        "",
        "| case | per op | ops/s | ratio to baseline |",
        "|---|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.name} | {_duration(row.seconds_per_op)} | {row.ops_per_second:,.0f} "
            f"| {row.seconds_per_op / baseline.seconds_per_op:.2f}x |"
        )
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def example_manifest(name: str) -> Manifest:
    """One example manifest, by file name."""
    return decode_manifest((EXAMPLES / name).read_bytes(), fmt="yaml", source=name)


def example_manifests() -> tuple[list[Manifest], list[Manifest]]:
    """The examples (examples/manifests/) as (hardware, deployments)."""
    hardware: list[Manifest] = []
    deployments: list[Manifest] = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        manifest = example_manifest(path.name)
        (hardware if manifest.kind == "HardwareManifest" else deployments).append(manifest)
    return hardware, deployments


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int | str) -> float:
    """user + system CPU of one process so far, from /proc (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def children(pid: int | str = "self") -> list[str]:
    """The pids of a process's children (the service's evaluation processes), from /proc."""
    found: list[str] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += (task / "children").read_text().split()
        except FileNotFoundError:
            continue  # a thread that ended meanwhile
    return found
