"""The policy input document (docs/policy-interface.md) and its canonical form and digest."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import msgspec

_encoder = msgspec.json.Encoder(order="sorted")


@dataclass(frozen=True, slots=True)
class PolicyInput:
    """One manifest's input: the document, its canonical JSON and `sha256:` digest.

    `timeless_key` is set when the decision cannot depend on the evaluation time (see
    `time_compared`): the digest of everything but `evaluated_at`. Equal keys under one policy
    revision and matrix mean equal decisions, which lets supportgate.policy.memo reuse them.
    """

    document: Mapping[str, Any]
    canonical: bytes
    digest: str
    timeless_key: str | None = None

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> PolicyInput:
        canonical = _encoder.encode(document)
        timeless_key = None
        if not _time_enters(document):
            timeless_key = canonical_digest(_without_time(canonical, document["evaluated_at"]))
        return cls(
            document=document,
            canonical=canonical,
            digest=canonical_digest(canonical),
            timeless_key=timeless_key,
        )


def _without_time(canonical: bytes, evaluated_at: str) -> bytes:
    """The canonical JSON less its `evaluated_at` member: keys are sorted, so it is the first
    one (`evaluated_at` < `hardware` < `manifest` < `waivers`), and cut off without encoding
    the document again."""
    member = b'"evaluated_at":' + _encoder.encode(evaluated_at) + b","
    if not canonical.startswith(b"{" + member):
        raise ValueError("the policy input does not start with its evaluation time")
    return b"{" + canonical[len(member) + 1 :]


def _time_enters(document: Mapping[str, Any]) -> bool:
    """Whether the policies may read the evaluation time for this input."""
    compared = time_compared(document.get("manifest", {}), document.get("waivers") or ())
    return next(compared, None) is not None


def time_compared(
    manifest: Mapping[str, Any], waivers: Sequence[Any]
) -> Iterator[tuple[Literal["evidence", "waiver"], Any]]:
    """Every value of an input that the policies compare with the evaluation time, and where
    it is: each waiver's `expires_at`, and each evidence item's `at` (an evidence part that
    is not an object is given whole: the policies judge it). They compare the time with
    nothing else (tests/policies/test_time_inputs.py keeps it so); without any of these, the
    decision is the same at every time. Used for the policy memo (`timeless_key`) and for a
    sweep's memo (supportgate.reevaluation.memo)."""
    for waiver in waivers:
        yield "waiver", waiver.get("expires_at") if isinstance(waiver, Mapping) else waiver
    spec = manifest.get("spec")
    evidence = spec.get("evidence") if isinstance(spec, Mapping) else None
    if evidence is None:
        return
    if not isinstance(evidence, Mapping):
        yield "evidence", evidence
        return
    for item in evidence.values():
        if not isinstance(item, Mapping):
            yield "evidence", item
        elif "at" in item:
            yield "evidence", item["at"]


def canonical_digest(canonical: bytes) -> str:
    return f"sha256:{hashlib.sha256(canonical).hexdigest()}"


def format_time(moment: datetime) -> str:
    """RFC 3339 in UTC with a `Z`; refuses naive datetimes."""
    if moment.tzinfo is None:
        raise ValueError("evaluation time must carry a time zone")
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def build_input(
    manifest: Mapping[str, Any],
    *,
    evaluated_at: datetime,
    hardware: Mapping[str, Any] | None = None,
    waivers: Sequence[Mapping[str, Any]] = (),
) -> PolicyInput:
    """Assemble the input for one manifest given as canonical builtins (see the interface doc)."""
    document: dict[str, Any] = {
        "manifest": manifest,
        "evaluated_at": format_time(evaluated_at),
        "waivers": list(waivers),
    }
    if hardware is not None:
        document["hardware"] = hardware
    return PolicyInput.from_document(document)
