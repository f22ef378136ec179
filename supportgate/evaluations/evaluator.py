"""Turns validated manifests into decisions with a policy engine under one matrix."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import uuid4

import msgspec

from supportgate.manifests import HardwareManifest, Manifest, to_builtins
from supportgate.manifests.decision import Cause, Decision, ManifestRef, PolicyResult
from supportgate.policy.engine import LoadedMatrix, PolicyEngine
from supportgate.policy.inputs import HardwareLookup, PolicyInput, build_input, hardware_spec


def no_tracked_hardware(_name: str) -> HardwareManifest | None:
    return None


@dataclass(frozen=True, slots=True)
class Subject:
    manifest: Manifest
    cause: Cause = "submission"
    waivers: Sequence[Mapping[str, Any]] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """With the exact input the decision was made from (enough to replay it)."""

    decision: Decision
    policy_input: PolicyInput


class Evaluator:
    def __init__(self, engine: PolicyEngine, matrix: LoadedMatrix) -> None:
        self.engine = engine
        self.matrix = matrix

    def evaluate(
        self,
        subject: Subject,
        *,
        evaluated_at: datetime,
        hardware: HardwareLookup = no_tracked_hardware,
    ) -> Evaluation:
        policy_input = self.policy_input(subject, evaluated_at=evaluated_at, hardware=hardware)
        return self.decide(subject, policy_input, evaluated_at)

    def decide(
        self, subject: Subject, policy_input: PolicyInput, evaluated_at: datetime
    ) -> Evaluation:
        result = self.engine.evaluate(self.matrix, policy_input)
        return self._evaluation(subject, policy_input, result, evaluated_at)

    def evaluate_batch(
        self,
        subjects: Sequence[Subject],
        *,
        evaluated_at: datetime,
        hardware: HardwareLookup = no_tracked_hardware,
    ) -> list[Evaluation]:
        inputs = [
            self.policy_input(subject, evaluated_at=evaluated_at, hardware=hardware)
            for subject in subjects
        ]
        results = self.engine.evaluate_many(self.matrix, inputs)
        return [
            self._evaluation(subject, policy_input, result, evaluated_at)
            for subject, policy_input, result in zip(subjects, inputs, results, strict=True)
        ]

    def policy_input(
        self, subject: Subject, *, evaluated_at: datetime, hardware: HardwareLookup
    ) -> PolicyInput:
        return build_input(
            to_builtins(subject.manifest),
            evaluated_at=evaluated_at,
            hardware=hardware_spec(subject.manifest, hardware),
            waivers=subject.waivers,
        )

    def _evaluation(
        self,
        subject: Subject,
        policy_input: PolicyInput,
        result: PolicyResult,
        evaluated_at: datetime,
    ) -> Evaluation:
        manifest = subject.manifest
        decision = Decision(
            **msgspec.structs.asdict(result),
            id=str(uuid4()),
            manifest=ManifestRef(kind=manifest.kind, name=manifest.metadata.name),
            matrix_version=self.matrix.version,
            policy_revision=self.engine.policy_revision,
            input_digest=policy_input.digest,
            evaluated_at=evaluated_at,
            cause=subject.cause,
        )
        return Evaluation(decision=decision, policy_input=policy_input)
