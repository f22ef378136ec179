"""The support matrix: versioned policy data (docs/manifests.md).

Required: `version`, `evidence_max_age_days` and `engines`; per engine `models`, `platforms`
and `host.os`. Optional, and omitted from the canonical form when absent or empty:
`effective_from`, `default_engine` (the policies then use `deepinfer`), `alternatives`, and
per engine `host.compiler`, `host.python`, `provides`, `arch_dependencies` and
`reference_topology`. A range is `min <= v < below`; either bound may be left out.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from supportgate.manifests.common import (
    NVIDIA_ARCH_RULE,
    Arch,
    Component,
    Contract,
    FieldError,
    NonNegativeInt,
    Text,
    UtcDateTime,
    Vendor,
    Version,
    check_arch,
    check_range,
    pattern,
    set_utc,
)

MatrixVersion = Annotated[
    str,
    pattern(
        r"^[0-9A-Za-z][0-9A-Za-z._-]{0,63}$",
        'a matrix version: up to 64 of 0-9, A-Z, a-z, ".", "_" and "-" ("2026.11.1")',
    ),
]


class VersionRange(Contract, frozen=True):
    """`min <= v < below` on dotted versions; a missing bound is open."""

    min: Version | None = None
    below: Version | None = None

    def __post_init__(self) -> None:
        check_range(self.min, self.below)


class ToolkitRange(Contract, frozen=True):
    """The toolkit a platform needs: this name, `min <= version < below`."""

    name: Text
    min: Version | None = None
    below: Version | None = None

    def __post_init__(self) -> None:
        check_range(self.min, self.below)


class Platform(Contract, frozen=True):
    """A `(vendor, arch)` an engine supports, with the toolkit it needs there."""

    vendor: Vendor
    arch: Arch
    toolkit: ToolkitRange

    json_schema_rules: ClassVar[dict[str, Any]] = NVIDIA_ARCH_RULE

    def __post_init__(self) -> None:
        check_arch(self.vendor, self.arch)


class CompilerMin(Contract, frozen=True):
    """The host compiler an engine needs: this name, at least `min`."""

    name: Text
    min: Version


class Host(Contract, frozen=True):
    """Host requirements: `os` names (required); compiler and python when they matter."""

    os: tuple[Text, ...]
    compiler: CompilerMin | None = None
    python: VersionRange | None = None


class ReferenceTopology(Contract, frozen=True):
    """The topology an engine is documented with."""

    prefill_gpus: NonNegativeInt
    decode_gpus: NonNegativeInt
    single_scale_up_domain: bool


class EngineSupport(Contract, frozen=True):
    """What the matrix lists for one engine."""

    models: tuple[Text, ...]
    platforms: tuple[Platform, ...]
    host: Host
    provides: tuple[Component, ...] = ()
    arch_dependencies: tuple[Text, ...] = ()
    reference_topology: ReferenceTopology | None = None


class AlternativePlatform(Contract, frozen=True):
    """A `(vendor, arch)` an alternative runtime documents."""

    vendor: Vendor
    arch: Arch

    json_schema_rules: ClassVar[dict[str, Any]] = NVIDIA_ARCH_RULE

    def __post_init__(self) -> None:
        check_arch(self.vendor, self.arch)


class Alternative(Contract, frozen=True):
    """A runtime that documents platforms an engine lacks (used in recommendations)."""

    name: Text
    platforms: tuple[AlternativePlatform, ...]


class Matrix(Contract, frozen=True, kw_only=True):
    """A published support matrix. `default_engine`, when given, must be one of `engines`."""

    version: MatrixVersion
    effective_from: UtcDateTime | None = None
    evidence_max_age_days: NonNegativeInt
    default_engine: Text | None = None
    engines: dict[Text, EngineSupport]
    alternatives: tuple[Alternative, ...] = ()

    def __post_init__(self) -> None:
        set_utc(self, "effective_from")
        if self.default_engine is not None and self.default_engine not in self.engines:
            raise FieldError(
                "default_engine", f"engine {self.default_engine!r} is not among `engines`"
            )
