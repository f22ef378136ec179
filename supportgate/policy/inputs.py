"""The policy input document (docs/policy-interface.md) and its canonical form and digest."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec

from supportgate.manifests import DeploymentManifest, HardwareManifest, Manifest, to_builtins

_encoder = msgspec.json.Encoder(order="sorted")

HardwareLookup = Callable[[str], HardwareManifest | None]


@dataclass(frozen=True, slots=True)
class PolicyInput:
    document: Mapping[str, Any]
    canonical: bytes
    digest: str
    manifest_digest: str  # of the manifest's canonical JSON: a tracked manifest's content_digest

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> PolicyInput:
        # the manifest encoded once, then embedded as it is (msgspec.Raw)
        manifest = _encoder.encode(document["manifest"])
        canonical = _encoder.encode({**document, "manifest": msgspec.Raw(manifest)})
        return cls(
            document=document,
            canonical=canonical,
            digest=canonical_digest(canonical),
            manifest_digest=canonical_digest(manifest),
        )

    def without_organisation(self) -> PolicyInput:
        """One failed: the decision leaves them all unread (docs/organisation-policies.md)."""
        return PolicyInput.from_document({**self.document, "organisation_failed": True})


def canonical_digest(canonical: bytes) -> str:
    return f"sha256:{hashlib.sha256(canonical).hexdigest()}"


def format_time(moment: datetime) -> str:
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
    document: dict[str, Any] = {
        "manifest": manifest,
        "evaluated_at": format_time(evaluated_at),
        "waivers": list(waivers),
    }
    if hardware is not None:
        document["hardware"] = hardware
    return PolicyInput.from_document(document)


def hardware_ref(manifest: Manifest) -> str | None:
    return manifest.spec.hardware.ref if isinstance(manifest, DeploymentManifest) else None


def hardware_spec(manifest: Manifest, lookup: HardwareLookup) -> dict[str, Any] | None:
    if not isinstance(manifest, DeploymentManifest):
        return None
    target = manifest.spec.hardware
    if target.spec is not None:
        return to_builtins(target.spec)
    pool = lookup(target.ref) if target.ref is not None else None
    return to_builtins(pool.spec) if pool is not None else None
