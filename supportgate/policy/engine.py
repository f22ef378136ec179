"""The interface every policy engine implements, and what they share."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import msgspec

from supportgate.errors import PolicyEvaluationError
from supportgate.manifests.decision import PolicyResult

from .inputs import PolicyInput
from .prepared import prepared_document

if TYPE_CHECKING:
    from .bundle import PolicyBundle

RESULT_RULE = "data.supportgate.decision.result"


_matrix_encoder = msgspec.json.Encoder(order="sorted")
_result_decoder = msgspec.json.Decoder(PolicyResult)


@dataclass(frozen=True, slots=True)
class LoadedMatrix:
    """`prepared` (data.supportgate.prepared) is made here, once per matrix, for both engines."""

    version: str
    document: Mapping[str, Any]
    canonical: bytes
    key: str
    prepared: bytes

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> LoadedMatrix:
        canonical = _matrix_encoder.encode(document)
        return cls(
            version=str(document["version"]),
            document=document,
            canonical=canonical,
            key=_key(canonical),
            prepared=_matrix_encoder.encode(prepared_document(document)),
        )

    def data_json(self) -> str:
        """data.matrix and data.supportgate.prepared as one document."""
        return (
            '{"matrix":'
            + self.canonical.decode()
            + ',"supportgate":{"prepared":'
            + self.prepared.decode()
            + "}}"
        )


def matrix_key(document: Mapping[str, Any]) -> str:
    return _key(_matrix_encoder.encode(document))


def _key(canonical: bytes) -> str:
    return hashlib.sha256(canonical).hexdigest()[:16]


@runtime_checkable  # a handler's `Part[PolicyEngine]` is checked with isinstance by Litestar
class PolicyEngine(Protocol):
    """Evaluates policy inputs under a matrix; the same answers from every implementation."""

    name: str

    @property
    def policy_revision(self) -> str: ...

    def evaluate(self, matrix: LoadedMatrix, policy_input: PolicyInput) -> PolicyResult: ...

    def evaluate_many(
        self, matrix: LoadedMatrix, inputs: Sequence[PolicyInput]
    ) -> list[PolicyResult]:
        """A sweep's batch: the evaluation process takes it in one exchange; the others one
        by one (OPA in one request per batch bought nothing: docs/performance.md)."""

    def check_ready(self) -> None:
        """Raises PolicyEngineError when the engine cannot evaluate right now."""

    def use(self, bundle: PolicyBundle, served_revision: str | None) -> None:
        """`served_revision`: of the OPA bundle the service now serves, if any."""

    def close(self) -> None: ...


def to_result(answer: object) -> PolicyResult:
    if answer is None:
        raise PolicyEvaluationError("the policy left the decision undefined")
    try:
        if isinstance(answer, bytes | str):
            return _result_decoder.decode(answer).normalised()
        return msgspec.convert(answer, PolicyResult).normalised()
    except msgspec.DecodeError as exc:  # ValidationError among them
        raise PolicyEvaluationError(f"the policy answered no decision document: {exc}") from exc


def sparing_org(
    evaluate: Callable[[PolicyInput], PolicyResult], policy_input: PolicyInput
) -> PolicyResult:
    """On failure, once more with the organisation rules unread: a failing organisation rule
    (Rego has no catch) must not cost the built-in verdict; a warn of rule `org` says so."""
    try:
        return evaluate(policy_input)
    except PolicyEvaluationError as exc:
        # Imported here, on this rare path: structlog brings rich with it, and `check`, which
        # imports this module, must start within 3x its engine's import (docs/performance.md).
        from supportgate.logging import get_logger  # noqa: PLC0415

        get_logger(__name__).warning(
            "organisation_rules_failed", error=str(exc), input=policy_input.digest
        )
        return evaluate(policy_input.without_organisation())
