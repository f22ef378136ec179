"""`collect`'s run: each value from its flag, else from its probe; every gap reported at
once (docs/collect.md lists each value's probe and flag, and what a gap does)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

from supportgate.errors import ManifestError, UsageError
from supportgate.manifests import HardwareManifest, decode_manifest

from . import parsers
from .options import CollectOptions
from .probe import Output, Probe

NVIDIA_QUERY: Final = ("index", "name", "compute_cap", "memory.total", "driver_version")
NVCC_COMMANDS: Final = ("nvcc", "/usr/local/cuda/bin/nvcc")
ACCELERATOR_FIELDS: Final = ("vendor", "model", "arch", "memory_gib", "per_node")
CANN_INFO: Final = "ascend_toolkit_install.info"
CANN_HOMES: Final = (
    "/usr/local/Ascend/ascend-toolkit/latest",
    "/usr/local/Ascend/cann",
)


class CollectError(UsageError):
    """Some values could neither be probed nor were given; the message lists each."""


@dataclass(frozen=True, slots=True)
class Missing:
    path: str
    reason: str
    flag: str

    def describe(self) -> str:
        return f"  {self.path}: {self.reason}; give {self.flag}"


@dataclass(slots=True)
class _Accelerator:
    vendor: str | None = None
    model: str | None = None
    arch: str | None = None
    memory_gib: float | None = None
    per_node: int | None = None
    driver: str | None = None
    problem: str | None = None
    driver_problem: str | None = None


def collect(options: CollectOptions, probe: Probe) -> HardwareManifest:
    missing: list[Missing] = []
    accelerator = _accelerator(options, probe, missing)
    found = asdict(accelerator).items()
    spec: dict[str, Any] = {
        "accelerator": {k: v for k, v in found if k in ACCELERATOR_FIELDS and v is not None},
        "nodes": options.nodes,
    }
    if options.scale_up_domain is not None and "interconnect" not in options.omit:
        spec["interconnect"] = {"scale_up_domain": options.scale_up_domain}
        if options.fabric:
            spec["interconnect"]["fabric"] = options.fabric
    spec["toolkit"] = _toolkit(options, probe, accelerator.vendor, missing)
    if "driver" not in options.omit:
        driver = options.driver or accelerator.driver
        if driver is None:
            reason = accelerator.driver_problem or accelerator.problem or "no driver version"
            missing.append(Missing("spec.driver", reason, "--driver (or --omit driver)"))
        spec["driver"] = driver
    if "os" not in options.omit:
        spec["os"] = _os(options, probe, missing)
    if "compiler" not in options.omit:
        spec["compiler"] = _compiler(options, probe, missing)
    if "python" not in options.omit:
        spec["python"] = _python(options, probe, missing)
    if missing:
        lines = "\n".join(item.describe() for item in missing)
        raise CollectError(
            f"collect could not find everything the manifest needs:\n{lines}", field=None
        )
    return _validated(options, spec)


def _validated(options: CollectOptions, spec: dict[str, Any]) -> HardwareManifest:
    metadata: dict[str, Any] = {"name": options.name}
    if options.owner:
        metadata["owner"] = options.owner
    if options.labels:
        metadata["labels"] = dict(options.labels)
    document = {
        "apiVersion": "supportgate/v1",
        "kind": "HardwareManifest",
        "metadata": metadata,
        "spec": spec,
    }
    try:
        manifest = decode_manifest(json.dumps(document).encode(), fmt="json")
    except ManifestError as exc:
        raise ManifestError(
            f"the collected manifest is not valid: {exc.message}", path=exc.path
        ) from None
    assert isinstance(manifest, HardwareManifest)  # noqa: S101 - kind is HardwareManifest above
    return manifest


def _accelerator(options: CollectOptions, probe: Probe, missing: list[Missing]) -> _Accelerator:
    given = options.vendor != "auto" and options.model and options.arch and options.per_node
    found = _Accelerator() if given else _probe_accelerator(options, probe)
    result = _Accelerator(
        vendor=options.vendor if options.vendor != "auto" else found.vendor,
        model=options.model or found.model,
        arch=options.arch or found.arch,
        memory_gib=options.memory_gib if options.memory_gib is not None else found.memory_gib,
        per_node=options.per_node or found.per_node,
        driver=found.driver,
        problem=found.problem,
        driver_problem=found.driver_problem,
    )
    why = found.problem or "not reported by the accelerator tool"
    for path, value, flag in (
        ("spec.accelerator.vendor", result.vendor, "--vendor"),
        ("spec.accelerator.model", result.model, "--model"),
        ("spec.accelerator.arch", result.arch, "--arch"),
        ("spec.accelerator.per_node", result.per_node, "--per-node"),
    ):
        if value is None:
            missing.append(Missing(path, why, flag))
    return result


def _probe_accelerator(options: CollectOptions, probe: Probe) -> _Accelerator:
    if options.vendor == "nvidia":
        return _probe_nvidia(options, probe) or _Accelerator(problem="nvidia-smi is not installed")
    if options.vendor == "ascend":
        return _probe_ascend(probe) or _Accelerator(problem="npu-smi is not installed")
    found = _probe_nvidia(options, probe) or _probe_ascend(probe)
    return found or _Accelerator(problem="neither nvidia-smi nor npu-smi is installed")


def _nvidia_query(columns: Sequence[str]) -> list[str]:
    return ["nvidia-smi", f"--query-gpu={','.join(columns)}", "--format=csv"]


def _probe_nvidia(options: CollectOptions, probe: Probe) -> _Accelerator | None:
    output = probe.run(_nvidia_query(NVIDIA_QUERY))
    if output is None:
        return None
    if not output.ok and "compute_cap" in output.text():  # drivers before 510 lack the field
        output = probe.run(_nvidia_query([c for c in NVIDIA_QUERY if c != "compute_cap"])) or output
    if not output.ok:
        return _Accelerator(vendor="nvidia", problem=_failure("nvidia-smi", output))
    gpus = parsers.parse_nvidia_csv(output.stdout)
    if not gpus:
        return _Accelerator(vendor="nvidia", problem="nvidia-smi listed no GPU")
    chosen = _choose_gpus(gpus, options.gpu_model)
    if isinstance(chosen, str):
        return _Accelerator(vendor="nvidia", problem=chosen)
    first = chosen[0]
    arch = parsers.nvidia_arch(first.compute_cap) if first.compute_cap else None
    memory = parsers.memory_gib(first.memory_mib) if first.memory_mib else None
    return _Accelerator(
        vendor="nvidia",
        model=parsers.nvidia_model(first.name),
        arch=arch,
        memory_gib=memory,
        per_node=len(chosen),
        driver=first.driver if first.driver and parsers.is_version(first.driver) else None,
        problem=None if arch else "nvidia-smi reported no compute capability (driver before 510?)",
        driver_problem=f"nvidia-smi reported no driver_version as a dotted number ({first.driver})",
    )


def _choose_gpus(gpus: list[parsers.Gpu], wanted: str | None) -> list[parsers.Gpu] | str:
    """The GPUs the manifest describes: all of them when they are one model, else those of
    `--gpu-model`; a text explaining the choice to make otherwise."""
    names = sorted({gpu.name for gpu in gpus})
    if wanted is not None:
        key = wanted.strip().lower()
        chosen = [
            gpu for gpu in gpus if key in {gpu.name.lower(), parsers.nvidia_model(gpu.name).lower()}
        ]
        return chosen or f"no GPU is a {wanted!r} (found: {', '.join(names)})"
    if len(names) > 1:
        return f"this machine mixes GPU models ({', '.join(names)}); pick one with --gpu-model"
    return gpus


def _probe_ascend(probe: Probe) -> _Accelerator | None:
    output = probe.run(["npu-smi", "info"])
    if output is None:
        return None
    if not output.ok:
        return _Accelerator(vendor="ascend", problem=_failure("npu-smi info", output))
    table = parsers.parse_npu_smi(output.stdout)
    if not table.chips:
        return _Accelerator(vendor="ascend", problem="npu-smi info listed no NPU")
    names = sorted({chip.name for chip in table.chips})
    if len(names) > 1:
        return _Accelerator(
            vendor="ascend", problem=f"this machine mixes NPU models ({', '.join(names)})"
        )
    first = table.chips[0]
    return _Accelerator(
        vendor="ascend",
        model=parsers.ascend_model(first.name),
        arch=parsers.ascend_arch(first.name),
        memory_gib=parsers.memory_gib(first.hbm_mb) if first.hbm_mb else None,
        per_node=len(table.chips),
        driver=table.driver,
        driver_problem=f"npu-smi's version {table.version!r} is not a dotted number",
    )


def _failure(command: str, output: Output) -> str:
    first = output.text().splitlines()[0] if output.text() else "no output"
    return f"`{command}` failed (exit {output.returncode}): {first}"


def _toolkit(
    options: CollectOptions, probe: Probe, vendor: str | None, missing: list[Missing]
) -> dict[str, str | None]:
    name = options.toolkit_name or {"nvidia": "cuda", "ascend": "cann"}.get(vendor or "")
    version = options.toolkit_version
    problem = "no toolkit probe for this accelerator"
    if version is None and name == "cuda":
        version, problem = _probe_nvcc(probe)
    elif version is None and name == "cann":
        version, problem = _probe_cann(probe)
    if name is None:
        missing.append(Missing("spec.toolkit.name", "unknown accelerator vendor", "--toolkit-name"))
    if version is None:
        missing.append(Missing("spec.toolkit.version", problem, "--toolkit-version"))
    return {"name": name, "version": version}


def _probe_nvcc(probe: Probe) -> tuple[str | None, str]:
    for command in NVCC_COMMANDS:
        output = probe.run([command, "--version"])
        if output is None:
            continue
        version = parsers.parse_nvcc(output.stdout) if output.ok else None
        if version is not None:
            return version, ""
        return None, f"`{command} --version` gave no CUDA release"
    return None, f"nvcc is not installed (tried {', '.join(NVCC_COMMANDS)})"


def _probe_cann(probe: Probe) -> tuple[str | None, str]:
    machine = _first_line(probe.run(["uname", "-m"])) or "aarch64"
    homes = [probe.env("ASCEND_HOME_PATH"), probe.env("ASCEND_TOOLKIT_HOME"), *CANN_HOMES]
    paths = [f"{home}/{machine}-linux/{CANN_INFO}" for home in homes if home]
    for path in dict.fromkeys(paths):
        text = probe.read(path)
        if text is None:
            continue
        version = parsers.parse_key_values(text).get("version")
        if version and parsers.is_version(version):
            return version, ""
        return None, f"the CANN version in {path} is {version!r}, not a dotted number"
    searched = ", ".join(dict.fromkeys(home for home in homes if home))
    return None, f"no CANN toolkit found (no {CANN_INFO} under {searched})"


def _os(options: CollectOptions, probe: Probe, missing: list[Missing]) -> dict[str, str | None]:
    name = options.os_name or (_first_line(probe.run(["uname", "-s"])) or "").lower() or None
    kernel = options.kernel or parsers.leading_version(
        _first_line(probe.run(["uname", "-r"])) or ""
    )
    distribution = options.distribution
    if distribution is None:
        text = probe.read("/etc/os-release") or probe.read("/usr/lib/os-release")
        distribution = parsers.parse_os_release(text) if text else None
    for path, value, flag, why in (
        ("spec.os.name", name, "--os-name", "`uname -s` gave nothing"),
        ("spec.os.kernel", kernel, "--kernel", "`uname -r` gave no version"),
        ("spec.os.distribution", distribution, "--distribution", "no ID in /etc/os-release"),
    ):
        if value is None:
            missing.append(Missing(path, why, flag))
    return {"name": name, "distribution": distribution, "kernel": kernel}


def _compiler(
    options: CollectOptions, probe: Probe, missing: list[Missing]
) -> dict[str, str | None]:
    version = options.compiler_version
    if version is None:
        version, why = _probe_version(
            probe, options.compiler_name, lambda output: parsers.parse_gcc(output.stdout)
        )
        if version is None:
            missing.append(
                Missing("spec.compiler.version", why, "--compiler-version (or --omit compiler)")
            )
    return {"name": options.compiler_name, "version": version}


def _python(options: CollectOptions, probe: Probe, missing: list[Missing]) -> str | None:
    if options.python_version is not None:
        return options.python_version
    version, why = _probe_version(
        probe, options.python_command, lambda output: parsers.parse_python(output.text())
    )
    if version is None:
        missing.append(
            Missing("spec.python", why, "--python-version or --python-command (or --omit python)")
        )
    return version


def _probe_version(
    probe: Probe, command: str, parse: Callable[[Output], str | None]
) -> tuple[str | None, str]:
    """`command --version`, parsed: (the version, "") or (None, why there is none)."""
    output = probe.run([command, "--version"])
    if output is None:
        return None, f"{command} is not installed"
    version = parse(output) if output.ok else None
    if version is None:
        return None, f"`{command} --version` gave no version"
    return version, ""


def _first_line(output: Output | None) -> str | None:
    if output is None or not output.ok or not output.stdout.strip():
        return None
    return output.stdout.strip().splitlines()[0].strip()
