"""POST /v1/evaluations: decode, resolve hardware, evaluate, record durably, track.

Owners: a key with owners posts only manifests whose `metadata.owner` is one of them (403
before anything is evaluated). Whether the content may replace a tracked manifest another
owner holds (only an admin's key changes an owner) is decided by the ledger's writer under
its head lock (ledger/write.py), so two concurrent posts cannot both pass a check made
before either is written; a submission it does not admit is a 403 too.

Idempotency-Key: the first response to (API key, Idempotency-Key) is stored in the same
transaction as its decision. A repeat with the same manifest gets that response and records
nothing; the same key with another manifest is a 409. "The same" is judged on the canonical
document (the decoded manifest, encoded with sorted keys), the one thing a decision depends on:
whitespace, key order, JSON or YAML, `8` or `8.0`, a time's offset do not make another body.
A body that does not decode is a 400 before the key is looked at. Concurrent repeats in this
process wait for the first; a repeat racing in another process loses at the database's
primary key and then answers from the stored response.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar

import anyio.to_thread
import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.auth import Principal
from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import transaction
from supportgate.errors import ConflictError, Forbidden, UsageError
from supportgate.ledger.batches import DecisionWrite, IdempotentAnswer, Tracking
from supportgate.ledger.decisions import decision_body
from supportgate.ledger.writer import IdempotencyConflict, LedgerWriter
from supportgate.manifests import (
    DeploymentManifest,
    Format,
    HardwareManifest,
    Manifest,
    decode_manifest,
)
from supportgate.manifests.common import END_GUARD
from supportgate.matrix.services import MatrixService
from supportgate.policy import PolicyEngine
from supportgate.policy.inputs import canonical_digest

from . import repository
from .evaluator import Evaluation, Evaluator, Subject

T = TypeVar("T")
CREATED = 201
MAX_IDEMPOTENCY_KEY = 255
IDEMPOTENCY_KEY_PATTERN = (
    rf"^[ \t]*[!-~](?:[ -~]{{0,{MAX_IDEMPOTENCY_KEY - 2}}}[!-~])?[ \t]*$" + END_GUARD
)
"""1 to MAX_IDEMPOTENCY_KEY printable ASCII characters; spaces and tabs around them are not
part of the key (HTTP strips them from a header value; so does `_check_idempotency_key`)."""
OWNER_FIELD = "$.metadata.owner"
INLINE_DECODE_BYTES = 64 * 1024  # larger bodies are decoded off the event loop
_canonical = msgspec.json.Encoder(order="sorted")


class ActiveWaivers(Protocol):
    """Where a submission's waivers come from (supportgate.waivers.services.WaiverService)."""

    def cache_is_fresh(self) -> bool: ...

    def active_for(self, kind: str, name: str, at: datetime) -> list[dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class _Claim:
    """The (API key, Idempotency-Key) a request holds while it is evaluated."""

    api_key_id: int
    key: str
    request_digest: str

    def answer(self, status_code: int) -> IdempotentAnswer:
        return IdempotentAnswer(
            api_key_id=self.api_key_id,
            key=self.key,
            request_digest=self.request_digest,
            status_code=status_code,
        )


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytes
    evaluation: Evaluation | None  # None when replayed from an Idempotency-Key


class EvaluationService:
    def __init__(
        self,
        *,
        sessions: sessionmaker[Session],
        engine: PolicyEngine,
        matrices: MatrixService,
        ledger: LedgerWriter,
        waivers: ActiveWaivers | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        """`clock`: the time a submission is evaluated at (its waivers, matrix, evidence age)."""
        self._sessions = sessions
        self._clock = clock
        self._waivers = waivers
        self._engine = engine
        self._matrices = matrices
        self._ledger = ledger
        self._in_flight: dict[tuple[int, str], asyncio.Future[None]] = {}

    async def submit(
        self, *, body: bytes, fmt: Format, principal: Principal, idempotency_key: str | None
    ) -> Answer:
        key = None if idempotency_key is None else _check_idempotency_key(idempotency_key)
        manifest = await self._run_off_loop_if(
            len(body) > INLINE_DECODE_BYTES, lambda: decode_manifest(body, fmt=fmt)
        )
        _check_owner(principal, manifest)
        if key is None:
            return await self._evaluate_and_record(manifest, principal, None)
        digest = canonical_digest(_canonical.encode(manifest))
        slot = (principal.key_id, key)
        while True:
            stored = await self._stored(principal.key_id, key, digest)
            if stored is not None:
                return stored
            waiting = self._in_flight.get(slot)
            if waiting is None:
                break
            await asyncio.shield(waiting)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._in_flight[slot] = done
        try:
            claim = _Claim(api_key_id=principal.key_id, key=key, request_digest=digest)
            return await self._evaluate_and_record(manifest, principal, claim)
        except IdempotencyConflict:
            stored = await self._stored(principal.key_id, key, digest)
            if stored is None:  # pragma: no cover - the conflict means a row exists
                raise
            return stored
        finally:
            done.set_result(None)
            del self._in_flight[slot]

    async def _evaluate_and_record(
        self, manifest: Manifest, principal: Principal, claim: _Claim | None
    ) -> Answer:
        pool = await self._hardware(manifest)
        now = self._clock.now()
        # The matrix cache is reloaded every few seconds; that read must not block the loop.
        matrix = await self._run_off_loop_if(
            not self._matrices.cache_is_fresh(), lambda: self._matrices.current(now)
        )
        evaluator = Evaluator(self._engine, matrix.loaded)
        subject = Subject(manifest, waivers=await self._active_waivers(manifest, now))
        policy_input = evaluator.policy_input(subject, evaluated_at=now, hardware=lambda _n: pool)
        # In a thread (an organisation's rule may take seconds): the loop answers meanwhile.
        evaluation = await anyio.to_thread.run_sync(
            lambda: evaluator.decide(subject, policy_input, now)
        )
        write = submission_write(
            evaluation,
            manifest,
            principal=principal,
            idempotency=None if claim is None else claim.answer(CREATED),
        )
        leaf_index = await self._ledger.append(write)
        if leaf_index is None:  # the writer did not admit it: Tracking.may_replace said no
            raise Forbidden(
                f"the tracked {manifest.kind} {manifest.metadata.name!r} has another owner "
                f"than {manifest.metadata.owner!r} (metadata.owner): only an admin's key "
                "that acts for its owner changes a tracked manifest's owner",
                field=OWNER_FIELD,
            )
        response = decision_body(evaluation.decision, leaf_index)
        return Answer(status=CREATED, body=response, evaluation=evaluation)

    async def _hardware(self, manifest: Manifest) -> HardwareManifest | None:
        ref = _hardware_ref(manifest)
        if ref is None:
            return None

        def load() -> HardwareManifest | None:
            with transaction(self._sessions) as session:
                row = repository.tracked(session, "HardwareManifest", ref)
                return None if row is None else msgspec.convert(row.content, HardwareManifest)

        return await anyio.to_thread.run_sync(load)

    async def _active_waivers(self, manifest: Manifest, now: datetime) -> list[dict[str, Any]]:
        """The manifest's waivers in force now: from memory, reloaded off the loop when stale."""
        waivers = self._waivers
        if waivers is None:
            return []
        return await self._run_off_loop_if(
            not waivers.cache_is_fresh(),
            lambda: waivers.active_for(manifest.kind, manifest.metadata.name, now),
        )

    async def _stored(self, api_key_id: int, key: str, digest: str) -> Answer | None:
        def load() -> tuple[str, int, bytes] | None:
            with transaction(self._sessions) as session:
                row = repository.stored_response(session, api_key_id, key)
                return (
                    None
                    if row is None
                    else (row.request_digest, row.status_code, row.response_body)
                )

        found = await anyio.to_thread.run_sync(load)
        if found is None:
            return None
        stored_digest, status, response = found
        if stored_digest != digest:
            raise ConflictError(
                "this key was already used with a different request body", field="Idempotency-Key"
            )
        return Answer(status=status, body=response, evaluation=None)

    @staticmethod
    async def _run_off_loop_if(condition: bool, work: Callable[[], T]) -> T:
        return await anyio.to_thread.run_sync(work) if condition else work()


def _check_owner(principal: Principal, manifest: Manifest) -> None:
    owner = manifest.metadata.owner
    if not principal.acts_for(owner):
        raise Forbidden(
            f"key {principal.name!r} acts for {', '.join(principal.owners)}, "
            f"not for metadata.owner {owner!r}",
            field=OWNER_FIELD,
        )


def submission_write(
    evaluation: Evaluation,
    manifest: Manifest,
    *,
    principal: Principal | None,
    idempotency: IdempotentAnswer | None = None,
) -> DecisionWrite:
    """The write of a submitted manifest's decision: it becomes the tracked content; an
    admin's key (or none: the service itself) may change its owner."""
    content = evaluation.policy_input.document["manifest"]  # to_builtins(manifest), made once
    return DecisionWrite(
        decision=evaluation.decision,
        policy_input=evaluation.policy_input.canonical.decode(),
        tracking=Tracking(
            content=content,
            content_digest=canonical_digest(_canonical.encode(content)),
            owner=manifest.metadata.owner,
            hardware_ref=_hardware_ref(manifest),
            changes_owner=principal is None or principal.role == "admin",
        ),
        idempotency=idempotency,
    )


def _hardware_ref(manifest: Manifest) -> str | None:
    return manifest.spec.hardware.ref if isinstance(manifest, DeploymentManifest) else None


def _check_idempotency_key(value: str) -> str:
    value = value.strip(" \t")
    if not 1 <= len(value) <= MAX_IDEMPOTENCY_KEY or not value.isascii() or not value.isprintable():
        raise UsageError(
            f"must be 1-{MAX_IDEMPOTENCY_KEY} printable ASCII characters", field="Idempotency-Key"
        )
    return value
