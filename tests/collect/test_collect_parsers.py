"""The `collect` parsers on recorded tool outputs (tests/fixtures/collect/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from supportgate.collect import parsers

pytestmark = pytest.mark.fast

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "collect"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_eight_h100_rows_by_header() -> None:
    gpus = parsers.parse_nvidia_csv(fixture("nvidia-smi/h100x8.csv"))
    assert len(gpus) == 8
    assert {gpu.name for gpu in gpus} == {"NVIDIA H100 80GB HBM3"}
    assert {gpu.memory_mib for gpu in gpus} == {81559}
    assert {gpu.compute_cap for gpu in gpus} == {None}  # not in that query


def test_columns_found_in_any_order() -> None:
    gpus = parsers.parse_nvidia_csv(fixture("nvidia-smi/mixed-titanv-rtx5880.csv"))
    assert [(g.name, g.compute_cap, g.driver) for g in gpus] == [
        ("NVIDIA TITAN V", "7.0", "570.86.15"),
        ("NVIDIA RTX 5880 Ada Generation", "8.9", "570.86.15"),
    ]


def test_not_available_values_are_missing() -> None:
    text = "name, compute_cap, memory.total [MiB]\nOld Card, [N/A], [Not Supported]\n"
    assert parsers.parse_nvidia_csv(text) == [parsers.Gpu(name="Old Card")]


def test_an_error_message_is_no_gpu_list() -> None:
    assert parsers.parse_nvidia_csv(fixture("nvidia-smi/compute-cap-unsupported.txt")) == []
    assert parsers.parse_nvidia_csv("") == []


@pytest.mark.parametrize(
    ("compute_cap", "arch"),
    [("9.0", "sm90"), ("8.9", "sm89"), ("10.0", "sm100"), ("12.0", "sm120"), ("8.0", "sm80")],
)
def test_nvidia_arch_from_compute_capability(compute_cap: str, arch: str) -> None:
    assert parsers.nvidia_arch(compute_cap) == arch


def test_nvidia_arch_refuses_other_text() -> None:
    assert parsers.nvidia_arch("[N/A]") is None


def test_models_and_memory() -> None:
    assert parsers.nvidia_model("NVIDIA GeForce RTX 4090") == "GeForce RTX 4090"
    assert parsers.nvidia_model("NVIDIA H100 80GB HBM3") == "H100 80GB HBM3"
    assert parsers.memory_gib(81559) == 80  # H100: usable memory, rounded
    assert parsers.memory_gib(24564) == 24  # RTX 4090
    assert parsers.memory_gib(32768) == 32  # Ascend 910B4 HBM
    assert parsers.memory_gib(100) is None


def test_npu_smi_four_910b4() -> None:
    table = parsers.parse_npu_smi(fixture("npu-smi/910b4x4-23.0.6.txt"))
    assert table.driver == "23.0.6"
    assert [chip.name for chip in table.chips] == ["910B4"] * 4  # the process table is skipped
    assert {chip.hbm_mb for chip in table.chips} == {32768}


def test_npu_smi_rc_driver_and_two_chips_of_one_card() -> None:
    table = parsers.parse_npu_smi(fixture("npu-smi/ascend910-a3-26.0.rc2.txt"))
    assert table.version == "26.0.rc2"
    assert table.driver is None  # not a dotted number
    assert [chip.name for chip in table.chips] == ["Ascend910", "Ascend910"]
    assert {chip.hbm_mb for chip in table.chips} == {65536}


@pytest.mark.parametrize(
    ("name", "arch", "model"),
    [
        ("910B4", "910b", "Ascend 910B4"),
        ("910B4-1", "910b", "Ascend 910B4-1"),
        ("Ascend910", "910", "Ascend 910"),
        ("310P3", "310p", "Ascend 310P3"),
        ("950PR", "950", "Ascend 950PR"),
        ("Ascend 950", "950", "Ascend 950"),
    ],
)
def test_ascend_names(name: str, arch: str, model: str) -> None:
    assert parsers.ascend_arch(name) == arch
    assert parsers.ascend_model(name) == model


@pytest.mark.parametrize(
    ("name", "release"),
    [
        ("nvcc/cuda-11.1.txt", "11.1"),
        ("nvcc/cuda-12.5.txt", "12.5"),
        ("nvcc/cuda-13.1.txt", "13.1"),
    ],
)
def test_nvcc_release(name: str, release: str) -> None:
    assert parsers.parse_nvcc(fixture(name)) == release


def test_gcc_version_outside_the_packager_notes() -> None:
    assert parsers.parse_gcc(fixture("gcc/ubuntu-13.1.0.txt")) == "13.1.0"
    assert parsers.parse_gcc(fixture("gcc/debian-12.2.0.txt")) == "12.2.0"
    assert parsers.parse_gcc("gcc (GCC) 8.5.0 20210514 (Red Hat 8.5.0-20)\n") == "8.5.0"
    assert parsers.parse_gcc("") is None


def test_python_version() -> None:
    assert parsers.parse_python(fixture("python/python-3.11.7.txt")) == "3.11.7"
    assert parsers.parse_python("Python 3.13.0rc1") == "3.13.0"
    assert parsers.parse_python("python3: command not found") is None


def test_os_release_distribution() -> None:
    assert parsers.parse_os_release(fixture("os-release/debian-12.txt")) == "debian-12"
    openeuler = parsers.parse_os_release(fixture("os-release/openeuler-20.03.txt"))
    assert openeuler == "openeuler-20.03"
    assert parsers.parse_os_release('ID=arch\nNAME="Arch Linux"\n') == "arch"
    assert parsers.parse_os_release("") is None


def test_cann_install_info() -> None:
    assert parsers.parse_key_values(fixture("cann/toolkit-8.0.0.info"))["version"] == "8.0.0"
    assert parsers.parse_key_values(fixture("cann/toolkit-8.3.RC2.info"))["version"] == "8.3.RC2"


def test_kernel_release_to_version() -> None:
    assert parsers.leading_version(fixture("uname/r-debian.txt")) == "6.18.44"
    assert parsers.leading_version("4.19.90-vhulk2211.3.0.h1543.eulerosv2r10.aarch64") == "4.19.90"
    assert parsers.leading_version("unknown") is None
