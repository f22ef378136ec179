"""The support matrix: versioned policy data (docs/manifests.md; CONTRACT 10.3, 10.6). Without
`default_engine` the policies use `deepinfer`."""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

import msgspec

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


class Platform(Contract, frozen=True, kw_only=True):
    """A `(vendor, arch)` an engine supports, with the toolkit it needs there. A `preview`
    platform is one the vendor ships without standing behind it: not officially supported,
    but no experimental port either (CONTRACT 10.6)."""

    vendor: Vendor
    arch: Arch
    toolkit: ToolkitRange
    tier: Literal["official", "preview"] = "official"

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
    """A runtime that documents platforms an engine lacks. A deployment on one of them is
    judged against it (CONTRACT 10.6): supported for its `models`, on its `host` where stated,
    and on the service components it `provides` where stated (an empty list states "none")."""

    name: Text
    platforms: tuple[AlternativePlatform, ...]
    models: tuple[Text, ...] = ()
    host: Host | None = None
    provides: tuple[Component, ...] | None = None


ModelPattern = Annotated[
    str,
    pattern(
        r"^([A-Za-z0-9 ._/+*?-]|\[[A-Za-z0-9 ._/+-]+\])+$",
        "a shell-style pattern of letters, digits, space, . _ / + -, * and ? and [...] classes"
        ' ("H100*", "*RTX*5090*"; "-" first in a class)',
    ),
]


class AcceleratorFamily(Contract, frozen=True, kw_only=True):
    """A family of accelerators: the models it is sold and reported under, as shell-style
    patterns matched without regard to case, and the arch every one of them has."""

    vendor: Vendor
    models: Annotated[tuple[ModelPattern, ...], msgspec.Meta(min_length=1)]
    arch: Arch
    consumer: bool = False

    json_schema_rules: ClassVar[dict[str, Any]] = NVIDIA_ARCH_RULE

    def __post_init__(self) -> None:
        check_arch(self.vendor, self.arch)
        for model in self.models:
            if re.search(r"[^\[]-\]", model):  # the policies' glob reads "-]" as an open range
                raise FieldError("models", f'{model!r}: write "-" first in a [...] class')


class Matrix(Contract, frozen=True, kw_only=True):
    """A published support matrix. `default_engine`, when given, must be one of `engines`."""

    version: MatrixVersion
    effective_from: UtcDateTime | None = None
    evidence_max_age_days: NonNegativeInt
    default_engine: Text | None = None
    engines: dict[Text, EngineSupport]
    alternatives: tuple[Alternative, ...] = ()
    accelerators: tuple[AcceleratorFamily, ...] = ()

    def __post_init__(self) -> None:
        set_utc(self, "effective_from")
        if self.default_engine is not None and self.default_engine not in self.engines:
            raise FieldError(
                "default_engine", f"engine {self.default_engine!r} is not among `engines`"
            )
