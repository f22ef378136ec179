"""`supportgate collect` as a real subprocess, with a PATH of fake tools printing recorded output.

Each fake tool is a shell script that prints a fixture of tests/fixtures/collect for the exact
arguments `collect` passes and fails loudly on any other, so a changed command line shows up
here. The manifest written is then read by `supportgate check`, as CI would.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from supportgate.manifests import HardwareManifest, decode_manifest

from ..server import clean_env, run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "collect"
QUERY = "--query-gpu=index,name,compute_cap,memory.total,driver_version --format=csv"
QUERY_OLD = "--query-gpu=index,name,memory.total,driver_version --format=csv"

Answer = tuple[int, str]  # exit status, fixture file (relative to FIXTURES) or literal text


def fake_tool(bin_dir: Path, name: str, answers: Mapping[str, Answer]) -> None:
    """A script printing a recorded output for each known argument string (sh builtins only:
    PATH holds nothing but the fakes)."""
    cases = []
    for args, (status, source) in answers.items():
        path = FIXTURES / source
        if path.is_file():
            quoted = shlex.quote(str(path))
            body = f'while IFS= read -r l || [ -n "$l" ]; do printf "%s\\n" "$l"; done < {quoted}'
        else:
            body = f"printf '%s\\n' {shlex.quote(source)}"
        cases.append(f"  {shlex.quote(args)}) {body}; exit {status} ;;")
    script = "\n".join(
        [
            "#!/bin/sh",
            'case "$*" in',
            *cases,
            f'  *) echo "fake {name}: unexpected arguments: $*" >&2; exit 64 ;;',
            "esac",
            "",
        ]
    )
    tool = bin_dir / name
    tool.write_text(script)
    tool.chmod(0o755)


def host_tools(bin_dir: Path, *, machine: str = "x86_64") -> None:
    fake_tool(bin_dir, "gcc", {"--version": (0, "gcc/ubuntu-13.1.0.txt")})
    fake_tool(bin_dir, "python3", {"--version": (0, "python/python-3.11.7.txt")})
    fake_tool(
        bin_dir,
        "uname",
        {"-s": (0, "uname/s-linux.txt"), "-r": (0, "uname/r-debian.txt"), "-m": (0, machine)},
    )


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "bin"
    directory.mkdir()
    return directory


def collect(bin_dir: Path, cwd: Path, *args: str, **env: str) -> tuple[int, str, str]:
    done = run_cli(["collect", *args], env=clean_env(PATH=str(bin_dir), **env), cwd=cwd)
    return done.returncode, done.stdout, done.stderr


def test_rtx_4090_collected_then_checked(bin_dir: Path, tmp_path: Path) -> None:
    host_tools(bin_dir)
    fake_tool(bin_dir, "nvidia-smi", {QUERY: (0, "nvidia-smi/rtx4090.csv")})
    fake_tool(bin_dir, "nvcc", {"--version": (0, "nvcc/cuda-13.1.txt")})
    args = ["--name", "rtx4090-workstation", "--owner", "research", "--driver", "560.35.03"]
    code, _, err = collect(bin_dir, tmp_path, *args, "--output", "hw.yaml")
    assert code == 0, err

    text = (tmp_path / "hw.yaml").read_text()
    assert 'version: "13.1"' in text
    assert 'python: "3.11.7"' in text
    manifest = decode_manifest(text.encode(), fmt="yaml", source="hw.yaml")
    assert isinstance(manifest, HardwareManifest)
    assert (manifest.spec.accelerator.model, manifest.spec.accelerator.arch) == (
        "GeForce RTX 4090",
        "sm89",
    )

    checked = run_cli(
        ["check", "--format", "json", "hw.yaml"], env=clean_env(), cwd=tmp_path, timeout=120
    )
    assert checked.returncode == 1, checked.stderr  # python 3.11 is outside deepinfer's range
    (result,) = json.loads(checked.stdout)["results"]
    assert result["decision"]["verdict"] == "rejected"
    rules = {violation["rule"] for violation in result["decision"]["violations"]}
    assert {"port.consumer-card", "host.python", "support.platform"} <= rules


def test_eight_h100_on_an_old_driver_as_json(bin_dir: Path, tmp_path: Path) -> None:
    host_tools(bin_dir)
    unsupported = (2, "nvidia-smi/compute-cap-unsupported.txt")
    fake_tool(
        bin_dir,
        "nvidia-smi",
        {QUERY: unsupported, QUERY_OLD: (0, "nvidia-smi/h100x8.csv")},
    )
    fake_tool(bin_dir, "nvcc", {"--version": (0, "nvcc/cuda-12.5.txt")})
    base = ["--name", "h100-pool-a", "--nodes", "8", "--driver", "470.182.03", "--format", "json"]

    code, out, err = collect(bin_dir, tmp_path, *base)
    assert code == 2
    assert out == ""
    assert "spec.accelerator.arch: nvidia-smi reported no compute capability" in err

    code, out, err = collect(bin_dir, tmp_path, *base, "--arch", "sm90", "--scale-up-domain", "8")
    assert code == 0, err
    document = json.loads(out)
    assert document["spec"]["accelerator"]["per_node"] == 8
    assert document["spec"]["accelerator"]["memory_gib"] == 80
    assert document["spec"]["nodes"] == 8
    assert decode_manifest(out.encode(), fmt="json") is not None


def test_ascend_with_cann_from_ascend_home_path(bin_dir: Path, tmp_path: Path) -> None:
    host_tools(bin_dir, machine="aarch64")
    fake_tool(bin_dir, "npu-smi", {"info": (0, "npu-smi/910b4x4-23.0.6.txt")})
    toolkit = tmp_path / "ascend-toolkit" / "latest"
    (toolkit / "aarch64-linux").mkdir(parents=True)
    info = (FIXTURES / "cann" / "toolkit-8.0.0.info").read_text()
    (toolkit / "aarch64-linux" / "ascend_toolkit_install.info").write_text(info)

    code, out, err = collect(
        bin_dir, tmp_path, "--name", "ascend-pool", ASCEND_HOME_PATH=str(toolkit)
    )
    assert code == 0, err
    spec = yaml.safe_load(out)["spec"]
    assert spec["accelerator"]["vendor"] == "ascend"
    assert spec["accelerator"]["arch"] == "910b"
    assert spec["toolkit"] == {"name": "cann", "version": "8.0.0"}
    assert spec["driver"] == "23.0.6"


def test_missing_tools_exit_2_and_write_nothing(bin_dir: Path, tmp_path: Path) -> None:
    host_tools(bin_dir)  # no nvidia-smi, npu-smi or nvcc
    code, out, err = collect(bin_dir, tmp_path, "--name", "bare", "--output", "hw.yaml")
    assert code == 2
    assert out == ""
    assert not (tmp_path / "hw.yaml").exists()
    assert err.startswith("supportgate: error: collect could not find everything")
    assert "neither nvidia-smi nor npu-smi is installed; give --vendor" in err
    assert "give --toolkit-version" in err


def test_usage_errors_exit_2(bin_dir: Path, tmp_path: Path) -> None:
    code, _, err = collect(bin_dir, tmp_path)  # --name is required
    assert code == 2
    assert "--name" in err
    code, _, err = collect(bin_dir, tmp_path, "--name", "x", "--label", "no-equals-sign")
    assert code == 2
    assert "--label: wants KEY=VALUE" in err
