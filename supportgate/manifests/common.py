"""Building blocks of the manifest and matrix Structs. Optional fields default to None (or
`()`) so that the canonical form omits them rather than writing `null`."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Annotated, Any, ClassVar, Final, Literal

import msgspec

from supportgate.errors import SupportgateError

END_GUARD: Final = r"(?!\n)"
"""Appended to each `$`-terminated pattern: Python's `$` also matches before a trailing
newline ("sm90\n"); this closes the gap. It stays in the published schemas: ECMA-262 reads it
as a no-op, and validators that use Python's `re` (the jsonschema library) then agree too."""

PATTERNS: dict[str, str] = {}
"""Each string pattern in the Structs, as msgspec quotes it in errors, to what it means."""


def pattern(regex: str, description: str) -> msgspec.Meta:
    """A string constraint; `description` (a noun phrase) goes into the schema and errors."""
    full = regex + END_GUARD
    PATTERNS[repr(full)] = description
    return msgspec.Meta(pattern=full, description=description)


DNS_LABEL_RE: Final = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
VERSION_RE: Final = r"^[0-9]+(\.[0-9]+){0,3}$"
VENDOR_RE: Final = r"^[a-z][a-z0-9-]*$"
ARCH_RE: Final = r"^[a-z0-9]+$"
NVIDIA_ARCH_RE: Final = r"^sm[0-9]+[a-z]?$"

DnsLabel = Annotated[
    str,
    pattern(
        DNS_LABEL_RE, "a DNS label: at most 63 of a-z, 0-9 and '-', not starting or ending in '-'"
    ),
]
Version = Annotated[
    str,
    pattern(
        VERSION_RE, 'a version: dotted numbers of 1 to 4 parts, as a string ("12.8", "560.35.03")'
    ),
]
Vendor = Annotated[str, pattern(VENDOR_RE, "a vendor in lower case (nvidia, ascend, amd)")]
Arch = Annotated[
    str,
    pattern(ARCH_RE, "an arch: `sm` + compute capability for NVIDIA (sm90), else e.g. 910b or 950"),
]
Text = Annotated[str, msgspec.Meta(min_length=1)]

STORABLE_TEXT_RE: Final = r"^[^\u0000]*$"
"""The decoder also refuses an unpaired surrogate, which no schema says: regex dialects over
UTF-8 (Rust's, Go's, RE2) cannot name surrogates."""

# An RFC 3339 time with an offset, as msgspec reads it: `T`, `t` or a space between date and
# time, any number of fraction digits, `Z`, `z`, `+01:00` or `+0100`; real calendar dates only.
# `[0-9]`, never `\d`: Python's `\d` also matches other scripts' digits.
_DAY_OF_ANY_MONTH = r"(?:0[1-9]|1[0-9]|2[0-8])"
_DATE = (
    r"[0-9]{4}-"
    rf"(?:(?:0[1-9]|1[0-2])-{_DAY_OF_ANY_MONTH}|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
    r"|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29"
)
_TIME = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
_OFFSET = r"[Zz]|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9]"

FIRST_YEAR: Final = 1678
LAST_YEAR: Final = 2261
"""Rego's time.parse_rfc3339_ns counts 64-bit nanoseconds since 1970 (1677-09-21 to
2262-04-11); a time it cannot read would silently count as none (evidence from 1600 not stale)."""
_YEARS = r"(?:167[89]|16[89][0-9]|1[7-9][0-9]{2}|2[01][0-9]{2}|22[0-5][0-9]|226[01])"
RFC3339_RE: Final = rf"^(?={_YEARS}-)(?:{_DATE})[Tt ]{_TIME}(?:{_OFFSET})${END_GUARD}"
EDGE_DAY_OFFSET_RE: Final = r"^(?:1678-01-01|2261-12-31)[Tt ][^+-]*[+-](?!00:?00$)"
"""A time on the first or last day of those years with an offset that is not zero: in UTC it
may fall outside them, so the decoder refuses every one (see `set_utc`)."""

UtcDateTime = Annotated[
    datetime,
    msgspec.Meta(
        tz=True,
        description=f"RFC 3339 time with an offset, in the years {FIRST_YEAR} to {LAST_YEAR};"
        " stored in UTC.",
        extra_json_schema={"pattern": RFC3339_RE, "not": {"pattern": EDGE_DAY_OFFSET_RE}},
    ),
]
MAX_SAFE_INTEGER: Final = 2**53 - 1
"""The largest integer accepted anywhere (and its negative the smallest): the largest every
JSON reader, both policy engines included, reads exactly (RFC 7493, I-JSON). Larger ones were
read differently by the two engines, or not at all (10**310: no decision)."""
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0, le=MAX_SAFE_INTEGER)]
PositiveInt = Annotated[int, msgspec.Meta(ge=1, le=MAX_SAFE_INTEGER)]
NonNegativeNumber = Annotated[float, msgspec.Meta(ge=0)]

Component = Literal[
    "kv_cache",
    "pd_orchestration",
    "load_balancing",
    "authentication",
    "http_transport",
    "api_compatibility",
]

_NVIDIA_ARCH = re.compile(NVIDIA_ARCH_RE.removesuffix("$") + r"\Z")

NVIDIA_ARCH_RULE: Final[dict[str, Any]] = {
    "if": {"properties": {"vendor": {"const": "nvidia"}}, "required": ["vendor"]},
    "then": {
        "properties": {
            "arch": {
                "description": "an NVIDIA arch: `sm` + compute capability (sm90, sm100a)",
                "pattern": NVIDIA_ARCH_RE + END_GUARD,
            }
        }
    },
}
"""`check_arch` in JSON Schema, for the Structs holding a vendor and an arch."""


class FieldError(SupportgateError, ValueError):
    """`field` is a dotted path relative to the Struct, so the decoder reports the full path."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(message)


class Contract(
    msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True, omit_defaults=True
):
    """Subclasses repeat `frozen=True` (mypy's dataclass_transform does not inherit it), and
    `kw_only=True` where a required field follows an optional one (msgspec does not inherit
    it)."""

    json_schema_rules: ClassVar[dict[str, Any]] = {}
    """What `__post_init__` checks, merged into this Struct's JSON Schema."""


def check_arch(vendor: str, arch: str) -> None:
    if vendor == "nvidia" and not _NVIDIA_ARCH.match(arch):
        raise FieldError(
            "arch",
            f"an NVIDIA arch is `sm` followed by the compute capability (sm90), not {arch!r}",
        )


def version_key(version: str) -> tuple[int, ...]:
    parts = [int(part) for part in version.split(".")]
    return tuple(parts + [0] * (4 - len(parts)))


def check_range(low: str | None, below: str | None) -> None:
    if low is not None and below is not None and version_key(low) >= version_key(below):
        raise FieldError("below", f"the range is empty: min {low!r} is not below {below!r}")


def set_utc(struct: msgspec.Struct, name: str) -> None:
    """In UTC, so the canonical form writes a `Z`. On the edge days only UTC is accepted
    (1678-01-01T00:00:00+01:00 is in 1677): simpler to state, here and in the schema."""
    moment: datetime | None = getattr(struct, name)
    if moment is not None:
        check_comparable(moment, name)
        msgspec.structs.force_setattr(struct, name, moment.astimezone(UTC))


_EDGE_DAYS: Final = (date(FIRST_YEAR, 1, 1), date(LAST_YEAR, 12, 31))


def check_comparable(moment: datetime, name: str) -> None:
    if not FIRST_YEAR <= moment.year <= LAST_YEAR:
        raise FieldError(
            name,
            f"{moment.isoformat()}: times must be in the years {FIRST_YEAR} to {LAST_YEAR}"
            " (the policies compare times as 64-bit nanoseconds since 1970)",
        )
    if moment.utcoffset() and moment.date() in _EDGE_DAYS:
        first, last = _EDGE_DAYS
        raise FieldError(
            name, f"{moment.isoformat()}: a time on {first} or {last} must be in UTC (Z)"
        )


class Metadata(Contract, frozen=True):
    """Identity of a manifest: `(kind, name)` is unique among tracked manifests."""

    name: DnsLabel
    owner: str | None = None
    labels: dict[str, str] | None = None
