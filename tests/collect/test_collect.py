"""`collect` on recorded machines: the probe answers with the outputs in tests/fixtures/collect."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from supportgate.collect.options import CollectOptions
from supportgate.collect.probe import Output
from supportgate.collect.render import render
from supportgate.collect.services import CollectError, collect
from supportgate.errors import ManifestError
from supportgate.manifests import HardwareManifest, decode_manifest

pytestmark = pytest.mark.fast

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "collect"
NVIDIA_QUERY = (
    "nvidia-smi --query-gpu=index,name,compute_cap,memory.total,driver_version --format=csv"
)
NVIDIA_QUERY_OLD = "nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv"
ASCEND_HOME = "/usr/local/Ascend/ascend-toolkit/latest"
CANN_INFO = f"{ASCEND_HOME}/aarch64-linux/ascend_toolkit_install.info"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def ok(name: str) -> Output:
    return Output(0, fixture(name))


@dataclass
class RecordedMachine:
    """A Probe answering from recordings; a command it has no answer for is not installed."""

    commands: dict[str, Output | None] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    environ: dict[str, str] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)

    def run(self, argv: Sequence[str]) -> Output | None:
        command = " ".join(argv)
        self.ran.append(command)
        return self.commands.get(command)

    def read(self, path: str) -> str | None:
        return self.files.get(path)

    def env(self, name: str) -> str | None:
        return self.environ.get(name)


def host() -> dict[str, Output | None]:
    """The Debian 12 host tools, as captured on the development machine."""
    return {
        "gcc --version": ok("gcc/debian-12.2.0.txt"),
        "python3 --version": ok("python/python-3.11.7.txt"),
        "uname -s": ok("uname/s-linux.txt"),
        "uname -r": ok("uname/r-debian.txt"),
        "uname -m": ok("uname/m-x86_64.txt"),
    }


def nvidia_machine(csv: str, nvcc: str = "nvcc/cuda-12.5.txt") -> RecordedMachine:
    commands = host() | {NVIDIA_QUERY: ok(csv), "nvcc --version": ok(nvcc)}
    return RecordedMachine(commands, files={"/etc/os-release": fixture("os-release/debian-12.txt")})


def ascend_machine(npu_smi: str, cann: str) -> RecordedMachine:
    commands = host() | {
        "npu-smi info": ok(npu_smi),
        "uname -m": Output(0, "aarch64\n"),
        "gcc --version": ok("gcc/ubuntu-13.1.0.txt"),
    }
    return RecordedMachine(
        commands,
        files={
            "/etc/os-release": fixture("os-release/openeuler-20.03.txt"),
            CANN_INFO: fixture(cann),
        },
        environ={"ASCEND_HOME_PATH": ASCEND_HOME},
    )


def options(**given: Any) -> CollectOptions:
    return replace(CollectOptions(name="pool-a"), **given)


def spec(manifest: HardwareManifest) -> dict[str, Any]:
    document = yaml.safe_load(render(manifest))
    assert isinstance(document, dict)
    return dict(document["spec"])


def missing_paths(error: CollectError) -> list[str]:
    return [line.split(":")[0].strip() for line in str(error).splitlines()[1:]]


def test_rtx_4090_workstation() -> None:
    machine = nvidia_machine("nvidia-smi/rtx4090.csv", nvcc="nvcc/cuda-13.1.txt")
    manifest = collect(options(driver="560.35.03", owner="research"), machine)
    assert spec(manifest) == {
        "accelerator": {
            "vendor": "nvidia",
            "model": "GeForce RTX 4090",
            "arch": "sm89",
            "per_node": 1,
        },
        "nodes": 1,
        "toolkit": {"name": "cuda", "version": "13.1"},
        "driver": "560.35.03",
        "os": {"name": "linux", "distribution": "debian-12", "kernel": "6.18.44"},
        "compiler": {"name": "gcc", "version": "12.2.0"},
        "python": "3.11.7",
    }
    assert manifest.metadata.owner == "research"


def test_eight_h100_need_the_arch_when_the_query_has_no_compute_capability() -> None:
    machine = nvidia_machine("nvidia-smi/h100x8.csv")
    with pytest.raises(CollectError) as caught:
        collect(options(), machine)
    assert missing_paths(caught.value) == ["spec.accelerator.arch", "spec.driver"]
    assert "give --arch" in str(caught.value)

    given = options(arch="sm90", driver="570.86.15", nodes=8, scale_up_domain=8, fabric="nvlink4")
    found = spec(collect(given, machine))
    assert found["accelerator"] == {
        "vendor": "nvidia",
        "model": "H100 80GB HBM3",
        "arch": "sm90",
        "memory_gib": 80.0,
        "per_node": 8,
    }
    assert found["nodes"] == 8
    assert found["interconnect"] == {"scale_up_domain": 8, "fabric": "nvlink4"}


def test_drivers_before_510_are_asked_again_without_compute_cap() -> None:
    unsupported = Output(2, fixture("nvidia-smi/compute-cap-unsupported.txt"))
    machine = nvidia_machine("nvidia-smi/h100x8.csv")
    machine.commands |= {NVIDIA_QUERY: unsupported, NVIDIA_QUERY_OLD: ok("nvidia-smi/h100x8.csv")}
    manifest = collect(options(arch="sm90", driver="470.182.03"), machine)
    assert machine.ran[:2] == [NVIDIA_QUERY, NVIDIA_QUERY_OLD]
    assert manifest.spec.accelerator.per_node == 8


def test_mixed_gpus_need_a_choice() -> None:
    machine = nvidia_machine("nvidia-smi/mixed-titanv-rtx5880.csv")
    with pytest.raises(CollectError) as caught:
        collect(options(), machine)
    message = str(caught.value)
    assert "NVIDIA RTX 5880 Ada Generation, NVIDIA TITAN V" in message
    assert "--gpu-model" in message

    chosen = spec(collect(options(gpu_model="RTX 5880 Ada Generation"), machine))
    assert chosen["accelerator"] == {
        "vendor": "nvidia",
        "model": "RTX 5880 Ada Generation",
        "arch": "sm89",
        "per_node": 1,
    }
    assert chosen["driver"] == "570.86.15"
    with pytest.raises(CollectError, match="no GPU is a 'A100'"):
        collect(options(gpu_model="A100"), machine)


def test_four_ascend_910b4_with_cann() -> None:
    machine = ascend_machine("npu-smi/910b4x4-23.0.6.txt", "cann/toolkit-8.0.0.info")
    found = spec(collect(options(), machine))
    assert found == {
        "accelerator": {
            "vendor": "ascend",
            "model": "Ascend 910B4",
            "arch": "910b",
            "memory_gib": 32.0,
            "per_node": 4,
        },
        "nodes": 1,
        "toolkit": {"name": "cann", "version": "8.0.0"},
        "driver": "23.0.6",
        "os": {"name": "linux", "distribution": "openeuler-20.03", "kernel": "6.18.44"},
        "compiler": {"name": "gcc", "version": "13.1.0"},
        "python": "3.11.7",
    }
    assert "nvidia-smi --query-gpu" in machine.ran[0]  # NVIDIA first, then Ascend


def test_cann_rc_versions_are_not_dotted_numbers() -> None:
    machine = ascend_machine("npu-smi/910b4-1x2-25.2.2.txt", "cann/toolkit-8.3.RC2.info")
    with pytest.raises(CollectError) as caught:
        collect(options(), machine)
    assert missing_paths(caught.value) == ["spec.toolkit.version"]
    assert "'8.3.RC2'" in str(caught.value)
    assert "--toolkit-version" in str(caught.value)
    manifest = collect(options(toolkit_version="8.3"), machine)
    assert manifest.spec.toolkit.version == "8.3"
    assert manifest.spec.driver == "25.2.2"
    assert manifest.spec.accelerator.per_node == 2


def test_rc_driver_is_refused_or_omitted() -> None:
    machine = ascend_machine("npu-smi/ascend910-a3-26.0.rc2.txt", "cann/toolkit-8.0.0.info")
    with pytest.raises(CollectError, match=r"spec.driver: npu-smi's version '26.0.rc2'"):
        collect(options(), machine)
    manifest = collect(options(omit=frozenset({"driver"})), machine)
    assert manifest.spec.driver is None
    assert (manifest.spec.accelerator.arch, manifest.spec.accelerator.per_node) == ("910", 2)


def test_nothing_installed_names_every_missing_value_and_its_flag() -> None:
    with pytest.raises(CollectError) as caught:
        collect(options(), RecordedMachine())
    assert missing_paths(caught.value) == [
        "spec.accelerator.vendor",
        "spec.accelerator.model",
        "spec.accelerator.arch",
        "spec.accelerator.per_node",
        "spec.toolkit.name",
        "spec.toolkit.version",
        "spec.driver",
        "spec.os.name",
        "spec.os.kernel",
        "spec.os.distribution",
        "spec.compiler.version",
        "spec.python",
    ]
    message = str(caught.value)
    assert "neither nvidia-smi nor npu-smi is installed" in message
    for flag in ("--vendor", "--arch", "--per-node", "--toolkit-version", "--python-version"):
        assert f"give {flag}" in message


def test_every_value_from_flags_runs_no_accelerator_tool() -> None:
    machine = RecordedMachine(host())
    given = options(
        vendor="nvidia",
        model="B200",
        arch="sm100",
        per_node=8,
        driver="580.65.06",
        toolkit_version="13.0.1",
        distribution="ubuntu-24.04",
        python_version="3.12.7",
        compiler_version="13.3.0",
    )
    manifest = collect(given, machine)
    assert manifest.spec.toolkit.name == "cuda"
    assert manifest.spec.python == "3.12.7"
    assert not any(
        command.startswith(("nvidia-smi", "nvcc", "python3", "gcc")) for command in machine.ran
    )


def test_a_broken_driver_is_reported_with_its_message() -> None:
    failure = Output(
        9,
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
        "Make sure that the latest NVIDIA driver is installed and running.\n",
    )
    machine = nvidia_machine("nvidia-smi/rtx4090.csv")
    machine.commands[NVIDIA_QUERY] = failure
    with pytest.raises(
        CollectError, match=r"`nvidia-smi` failed \(exit 9\): NVIDIA-SMI has failed"
    ):
        collect(options(), machine)


def test_nvcc_outside_path_is_found_in_usr_local_cuda() -> None:
    machine = nvidia_machine("nvidia-smi/rtx4090.csv")
    machine.commands["/usr/local/cuda/bin/nvcc --version"] = machine.commands.pop("nvcc --version")
    assert collect(options(driver="560.35.03"), machine).spec.toolkit.version == "12.5"


def test_a_bad_flag_value_names_the_field() -> None:
    machine = nvidia_machine("nvidia-smi/rtx4090.csv")
    with pytest.raises(ManifestError) as caught:
        collect(options(driver="560.35.03", arch="90"), machine)
    assert caught.value.path == "$.spec.accelerator.arch"
    with pytest.raises(ManifestError) as bad_name:
        collect(options(driver="560.35.03", name="Pool_A"), machine)
    assert bad_name.value.path == "$.metadata.name"


def test_yaml_quotes_versions_and_round_trips() -> None:
    machine = nvidia_machine("nvidia-smi/rtx4090.csv")
    manifest = collect(options(driver="560.35.03", labels={"site": "fra1", "rack": "12"}), machine)
    text = render(manifest, "yaml")
    for line in ('version: "12.5"', 'driver: "560.35.03"', 'kernel: "6.18.44"', 'python: "3.11.7"'):
        assert line in text
    assert 'rack: "12"' in text
    assert text.startswith("apiVersion: supportgate/v1\nkind: HardwareManifest\n")
    assert decode_manifest(text.encode(), fmt="yaml") == manifest
    assert decode_manifest(render(manifest, "json").encode(), fmt="json") == manifest


def test_a_numeric_arch_is_quoted_too() -> None:
    machine = ascend_machine("npu-smi/910b4x4-23.0.6.txt", "cann/toolkit-8.0.0.info")
    manifest = collect(options(arch="950", model="Ascend 950"), machine)
    assert 'arch: "950"' in render(manifest)


def test_a_python_given_by_command() -> None:
    machine = nvidia_machine("nvidia-smi/rtx4090.csv")
    machine.commands["/opt/py/bin/python --version"] = Output(0, "Python 3.12.3\n")
    manifest = collect(options(driver="560.35.03", python_command="/opt/py/bin/python"), machine)
    assert manifest.spec.python == "3.12.3"


def test_a_compiler_or_python_without_a_version_says_why() -> None:
    machine = nvidia_machine("nvidia-smi/rtx4090.csv")
    machine.commands["gcc --version"] = Output(1, fixture("gcc/debian-12.2.0.txt"))  # failed
    del machine.commands["python3 --version"]
    with pytest.raises(CollectError) as caught:
        collect(options(driver="560.35.03"), machine)
    assert missing_paths(caught.value) == ["spec.compiler.version", "spec.python"]
    message = str(caught.value)
    assert "`gcc --version` gave no version" in message
    assert "python3 is not installed" in message

    machine.commands["python3 --version"] = Output(0, "no version here\n")
    with pytest.raises(CollectError, match="`python3 --version` gave no version"):
        collect(options(driver="560.35.03", compiler_version="12.2.0"), machine)
