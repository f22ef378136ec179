"""DeploymentManifest: what runs on a pool (docs/manifests.md)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec

from supportgate.manifests.common import (
    Contract,
    DnsLabel,
    Metadata,
    NonNegativeInt,
    NonNegativeNumber,
    PositiveInt,
    Text,
    UtcDateTime,
    Version,
    set_utc,
)
from supportgate.manifests.hardware import HardwareSpec

Stage = Literal["evaluation", "experimental", "production"]
Mode = Literal["offline", "online"]
Source = Literal["builtin", "external", "missing"]
PortStatus = Literal["ported", "unported", "unknown"]
EvidenceStatus = Literal["passed", "failed", "absent"]


class HardwareBinding(Contract, frozen=True):
    """The pool a deployment runs on: exactly one of `ref` (a tracked pool's name) and `spec`."""

    ref: DnsLabel | None = None
    spec: HardwareSpec | None = None

    json_schema_rules: ClassVar[dict[str, Any]] = {  # a null one counts as absent
        "oneOf": [
            {"required": ["ref"], "properties": {"ref": {"not": {"type": "null"}}}},
            {"required": ["spec"], "properties": {"spec": {"not": {"type": "null"}}}},
        ],
    }

    def __post_init__(self) -> None:
        if (self.ref is None) == (self.spec is None):
            raise ValueError("give exactly one of `ref` (a HardwareManifest name) and `spec`")


class Engine(Contract, frozen=True):
    """The inference engine and the version (and optionally commit) deployed."""

    name: Text
    version: Version
    commit: str | None = None


class Model(Contract, frozen=True):
    """The model served."""

    name: Text
    quantization: str | None = None


class Topology(Contract, frozen=True):
    """`replicas` copies of one group: accelerators given to prefill and to decode."""

    prefill_gpus: NonNegativeInt
    decode_gpus: PositiveInt
    replicas: PositiveInt = 1


class ServiceComponent(Contract, frozen=True):
    """Where one production-service component comes from."""

    source: Source
    provider: str | None = None
    persistent: bool | None = None


class Service(Contract, frozen=True):
    """The six production-service components; a missing one counts as `source: missing`."""

    kv_cache: ServiceComponent | None = None
    pd_orchestration: ServiceComponent | None = None
    load_balancing: ServiceComponent | None = None
    authentication: ServiceComponent | None = None
    http_transport: ServiceComponent | None = None
    api_compatibility: ServiceComponent | None = None


class Pins(Contract, frozen=True):
    """What an experimental port pins. Free text: a compiler pin reads like `gcc-13.2.0`."""

    engine: str | None = None
    toolkit: str | None = None
    driver: str | None = None
    compiler: str | None = None
    model: str | None = None


class Port(Contract, frozen=True):
    """The experimental-port record for an unlisted platform or model."""

    production_stack_unchanged: bool | None = None
    isolated_branch: bool | None = None
    pinned: Pins | None = None
    arch_dependencies: dict[str, PortStatus] | None = None


class EvidenceItem(Contract, frozen=True):
    """One piece of evidence. `at` is stored in UTC."""

    status: EvidenceStatus
    at: UtcDateTime | None = None
    ref: str | None = None
    reference_runtime: str | None = None

    def __post_init__(self) -> None:
        set_utc(self, "at")


class PerformanceEvidence(EvidenceItem, frozen=True):
    """Performance evidence, with the measured figures (all >= 0)."""

    prefill_latency_ms: NonNegativeNumber | None = None
    decode_latency_ms: NonNegativeNumber | None = None
    concurrency: NonNegativeInt | None = None
    memory_gib: NonNegativeNumber | None = None
    recovery_s: NonNegativeNumber | None = None


class Evidence(Contract, frozen=True):
    """The seven evidence items; a missing one counts as `status: absent`."""

    build: EvidenceItem | None = None
    numerical_parity: EvidenceItem | None = None
    structured_output: EvidenceItem | None = None
    long_context: EvidenceItem | None = None
    distributed_stability: EvidenceItem | None = None
    performance: PerformanceEvidence | None = None
    workload_improvement: EvidenceItem | None = None


class DeploymentSpec(Contract, frozen=True):
    """What runs, where, at which stage, and with which service, port record and evidence."""

    hardware: HardwareBinding
    engine: Engine
    model: Model
    stage: Stage
    mode: Mode
    topology: Topology
    service: Service | None = None
    port: Port | None = None
    evidence: Evidence | None = None


class DeploymentManifest(Contract, frozen=True, tag_field="kind", tag="DeploymentManifest"):
    """What runs on a pool. `kind` is the tag that selects this Struct on decode."""

    kind: ClassVar[Literal["DeploymentManifest"]] = "DeploymentManifest"
    api_version: Literal["supportgate/v1"] = msgspec.field(name="apiVersion")
    metadata: Metadata
    spec: DeploymentSpec
