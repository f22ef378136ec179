"""HardwareManifest: a pool of machines (docs/manifests.md)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec

from supportgate.manifests.common import (
    NVIDIA_ARCH_RULE,
    Arch,
    Contract,
    Metadata,
    PositiveInt,
    Text,
    Vendor,
    Version,
    check_arch,
)


class Accelerator(Contract, frozen=True, kw_only=True):
    """The accelerator in each node. An NVIDIA `arch` is `sm` + compute capability (sm90)."""

    vendor: Vendor
    model: Text
    arch: Arch
    memory_gib: Annotated[float, msgspec.Meta(gt=0)] | None = None
    per_node: PositiveInt

    json_schema_rules: ClassVar[dict[str, Any]] = NVIDIA_ARCH_RULE

    def __post_init__(self) -> None:
        check_arch(self.vendor, self.arch)


class Interconnect(Contract, frozen=True):
    """The scale-up fabric: how many accelerators share one NVLink/HCCS domain."""

    scale_up_domain: PositiveInt
    fabric: str | None = None


class Toolkit(Contract, frozen=True):
    """The accelerator toolkit (cuda, cann, rocm, ...) and its version."""

    name: Text
    version: Version


class OperatingSystem(Contract, frozen=True):
    """The host operating system."""

    name: Text
    distribution: str | None = None
    kernel: Version | None = None


class Compiler(Contract, frozen=True):
    """The host compiler used to build the engine."""

    name: Text
    version: Version


class HardwareSpec(Contract, frozen=True, kw_only=True):
    """What a pool of machines offers; also the inline `spec.hardware.spec` of a deployment."""

    accelerator: Accelerator
    nodes: PositiveInt
    interconnect: Interconnect | None = None
    toolkit: Toolkit
    driver: Version | None = None
    os: OperatingSystem | None = None
    compiler: Compiler | None = None
    python: Version | None = None


class HardwareManifest(Contract, frozen=True, tag_field="kind", tag="HardwareManifest"):
    """A pool of machines. `kind` is the tag that selects this Struct on decode."""

    kind: ClassVar[Literal["HardwareManifest"]] = "HardwareManifest"
    api_version: Literal["supportgate/v1"] = msgspec.field(name="apiVersion")
    metadata: Metadata
    spec: HardwareSpec
