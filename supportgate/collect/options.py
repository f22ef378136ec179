"""What `supportgate collect` can be asked, apart from the probes and the renderer: building
the command line, which every `supportgate` command does, loads none of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

Vendor = Literal["auto", "nvidia", "ascend"]
OPTIONAL_FIELDS: Final = ("interconnect", "driver", "os", "compiler", "python")
OutputFormat = Literal["yaml", "json"]
FORMATS: Final[tuple[OutputFormat, ...]] = ("yaml", "json")


@dataclass(frozen=True, slots=True)
class CollectOptions:
    """The command line of `supportgate collect`; None means "probe it"."""

    name: str
    owner: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    nodes: int = 1
    scale_up_domain: int | None = None
    fabric: str | None = None
    vendor: Vendor = "auto"
    model: str | None = None
    arch: str | None = None
    memory_gib: float | None = None
    per_node: int | None = None
    gpu_model: str | None = None
    driver: str | None = None
    toolkit_name: str | None = None
    toolkit_version: str | None = None
    os_name: str | None = None
    distribution: str | None = None
    kernel: str | None = None
    compiler_name: str = "gcc"
    compiler_version: str | None = None
    python_command: str = "python3"
    python_version: str | None = None
    omit: frozenset[str] = frozenset()
