"""Pure parsers for the tool outputs `collect` reads: None (or []) for text they do not
recognise, so that the caller says what was missing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from supportgate.manifests.common import VERSION_RE

_VERSION: Final = re.compile(VERSION_RE.removesuffix("$") + r"\Z")
_LEADING_VERSION: Final = re.compile(r"\d+(?:\.\d+){0,3}")
_MISSING_VALUES: Final = frozenset({"", "[n/a]", "n/a", "[not supported]", "[unknown error]"})


def is_version(text: str) -> bool:
    return bool(_VERSION.match(text))


def leading_version(text: str) -> str | None:
    """The dotted number a text starts with: "6.8.0-45-generic" -> "6.8.0"."""
    found = _LEADING_VERSION.match(text.strip())
    return found.group(0) if found else None


# --- nvidia-smi --query-gpu=... --format=csv ---------------------------------------------


@dataclass(frozen=True, slots=True)
class Gpu:
    """One row of `nvidia-smi --query-gpu`; fields the query or driver lacks are None."""

    name: str
    compute_cap: str | None = None
    memory_mib: int | None = None
    driver: str | None = None


def parse_nvidia_csv(text: str) -> list[Gpu]:
    """Columns are found by the header ("memory.total [MiB]" is `memory.total`), so any order
    and any extra columns are fine; `name` is required.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    header = [column.split(" [", 1)[0].strip().lower() for column in lines[0].split(",")]
    if "name" not in header:
        return []
    gpus = []
    for line in lines[1:]:
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(header):
            continue
        row = {
            key: (None if value.lower() in _MISSING_VALUES else value)
            for key, value in zip(header, cells, strict=True)
        }
        name = row.get("name")
        if name is None:
            continue
        gpus.append(
            Gpu(
                name=name,
                compute_cap=row.get("compute_cap"),
                memory_mib=_mib(row.get("memory.total")),
                driver=row.get("driver_version"),
            )
        )
    return gpus


def _mib(value: str | None) -> int | None:
    if value is None:
        return None
    found = re.fullmatch(r"(\d+)(?:\s*MiB)?", value)
    return int(found.group(1)) if found else None


def nvidia_arch(compute_cap: str) -> str | None:
    """ "9.0" -> "sm90", "12.0" -> "sm120", "8.9" -> "sm89"."""
    found = re.fullmatch(r"(\d+)\.(\d+)", compute_cap.strip())
    return f"sm{found.group(1)}{found.group(2)}" if found else None


def nvidia_model(name: str) -> str:
    """ "NVIDIA GeForce RTX 4090" -> "GeForce RTX 4090"."""
    return name.removeprefix("NVIDIA ").strip() or name


def memory_gib(mib: int) -> int | None:
    """Whole GiB, rounded (nvidia-smi reports usable memory: 81559 MiB on an 80 GB H100)."""
    gib = round(mib / 1024)
    return gib if gib >= 1 else None


# --- npu-smi info -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Npu:
    """One chip of `npu-smi info` (an Atlas A3 card has two, each a device of its own)."""

    name: str
    hbm_mb: int | None = None


@dataclass(frozen=True, slots=True)
class NpuSmi:
    version: str | None  # as printed: "23.0.6", "26.0.rc2"
    driver: str | None  # the version when it is a dotted number
    chips: tuple[Npu, ...]


_NPU_SMI_VERSION: Final = re.compile(r"npu-smi\s+\S+\s+Version:\s*(\S+)")
_NAME_ROW: Final = re.compile(r"^\|\s*\d+\s+(\S+)\s+\|\s*(OK|Warning|Alarm|Critical|\S+)\s+\|")
_BUS_ROW: Final = re.compile(r"^\|[^|]*\|\s*[0-9A-Fa-fx]{4,}:[0-9A-Fa-fx]{2}:[0-9A-Fa-fx]{2}\.\d")
_HBM: Final = re.compile(r"(\d+)\s*/\s*(\d+)\s*\|?\s*$")


def parse_npu_smi(text: str) -> NpuSmi:
    """Each chip is two rows: the chip name, then the bus id with `HBM-Usage(MB)` "used / total"
    last (the process table's rows carry no bus id). The driver: only a dotted number."""
    found = _NPU_SMI_VERSION.search(text)
    version = found.group(1) if found else None
    driver = version if version and is_version(version) else None
    chips: list[Npu] = []
    pending: str | None = None
    for line in text.splitlines():
        if pending is not None and _BUS_ROW.match(line):
            hbm = _HBM.search(line.rstrip().rstrip("|"))
            chips.append(Npu(name=pending, hbm_mb=int(hbm.group(2)) if hbm else None))
            pending = None
            continue
        named = _NAME_ROW.match(line)
        if named and not _BUS_ROW.match(line):
            pending = named.group(1)
    return NpuSmi(version=version, driver=driver, chips=tuple(chips))


def ascend_arch(name: str) -> str | None:
    """The chip generation: "910B4" / "910B4-1" -> "910b", "310P3" -> "310p", "Ascend910" ->
    "910", "950PR" -> "950" (a one-letter suffix before a digit, '-' or the end is part of the
    generation; a longer one, PR or DT, names a variant)."""
    bare = re.sub(r"^ascend\s*", "", name.strip().lower())
    found = re.match(r"(\d+)([a-z](?=\d|-|$))?", bare)
    return found.group(1) + (found.group(2) or "") if found else None


def ascend_model(name: str) -> str:
    """ "910B4" -> "Ascend 910B4", "Ascend910" -> "Ascend 910"."""
    bare = re.sub(r"^ascend\s*", "", name.strip(), flags=re.IGNORECASE)
    return f"Ascend {bare}"


def parse_key_values(text: str) -> dict[str, str]:
    """`KEY=value` lines (os-release, ascend_toolkit_install.info); quotes removed."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            found[key.strip()] = value.strip().strip("\"'")
    return found


# --- nvcc, gcc, python, os-release --------------------------------------------------------


def parse_nvcc(text: str) -> str | None:
    """ "Cuda compilation tools, release 12.5, V12.5.82" -> "12.5"."""
    found = re.search(r"release (\d+\.\d+)", text)
    return found.group(1) if found else None


def parse_gcc(text: str) -> str | None:
    """ "gcc (Ubuntu 13.1.0-8ubuntu1~22.04) 13.1.0" -> "13.1.0"."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    without_notes = re.sub(r"\([^)]*\)", " ", first)
    for token in without_notes.split():
        if is_version(token):
            return token
    return None


def parse_python(text: str) -> str | None:
    """`python3 --version`: "Python 3.12.3" -> "3.12.3" ("3.13.0rc1" -> "3.13.0")."""
    found = re.search(r"Python\s+(\S+)", text)
    return leading_version(found.group(1)) if found else None


def parse_os_release(text: str) -> str | None:
    """The distribution: `ID-VERSION_ID` in lower case ("ubuntu-24.04", "openeuler-20.03");
    just `ID` when the release has no version (Debian sid, Arch)."""
    fields = parse_key_values(text)
    distro_id = fields.get("ID", "").lower()
    if not distro_id:
        return None
    version = fields.get("VERSION_ID", "")
    return f"{distro_id}-{version}" if version else distro_id
