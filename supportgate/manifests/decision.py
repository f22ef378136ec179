"""The decision document (docs/manifests.md): `PolicyResult` is what the Rego entrypoint
answers, `Decision` adds what Python knows of the evaluation and the log."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, get_args

import msgspec

Verdict = Literal["supported", "experimental", "rejected"]
Severity = Literal["deny", "warn", "waived"]
Proof = Literal["proven", "unproven"]
ServiceCompleteness = Literal["complete", "external", "incomplete", "not-applicable"]
Cause = Literal["submission", "hardware", "matrix", "policy", "waiver", "schedule"]
ManifestKind = Literal["HardwareManifest", "DeploymentManifest"]

VERDICTS: tuple[str, ...] = get_args(Verdict)
CAUSES: tuple[str, ...] = get_args(Cause)
MANIFEST_KINDS: tuple[str, ...] = get_args(ManifestKind)


class _Doc(
    msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True, omit_defaults=True
):
    pass


class Violation(_Doc, frozen=True):
    rule: str
    severity: Severity
    message: str
    path: str
    waiver_id: str | None = None

    def sort_key(self) -> tuple[str, str, str]:
        return (self.rule, self.path, self.message)


class Claims(_Doc, frozen=True):
    builds: Proof
    correct: Proof
    performant: Proof


class Checklist(_Doc, frozen=True):
    official_support: bool
    kernels_and_correctness: Proof
    distributed_performance: Proof
    service_completeness: ServiceCompleteness


class PolicyResult(_Doc, frozen=True):
    """The policy's answer for one manifest, normalised (sorted violations and recommendations)."""

    verdict: Verdict
    allowed: bool
    violations: tuple[Violation, ...]
    claims: Claims
    checklist: Checklist
    recommendations: tuple[str, ...]

    def normalised(self) -> PolicyResult:
        return msgspec.structs.replace(
            self,
            violations=tuple(sorted(self.violations, key=Violation.sort_key)),
            recommendations=tuple(sorted(set(self.recommendations))),
        )


class ManifestRef(_Doc, frozen=True):
    kind: ManifestKind
    name: str


class Decision(_Doc, frozen=True):
    id: str
    manifest: ManifestRef
    verdict: Verdict
    allowed: bool
    violations: tuple[Violation, ...]
    claims: Claims
    checklist: Checklist
    recommendations: tuple[str, ...]
    matrix_version: str
    policy_revision: str
    input_digest: Annotated[str, msgspec.Meta(pattern="^sha256:[0-9a-f]{64}$")]
    evaluated_at: Annotated[datetime, msgspec.Meta(tz=True)]
    cause: Cause
    leaf_index: Annotated[int, msgspec.Meta(ge=0)] | None = None
    """The decision's entry in the verifiable log (CONTRACT section 6); omitted before the
    decision is written, and never part of the entry itself."""

    def rules(self, *severities: Severity) -> set[str]:
        return {v.rule for v in self.violations if not severities or v.severity in severities}
