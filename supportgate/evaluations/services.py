"""POST /v1/evaluations: decode, resolve hardware, evaluate, record durably, track. Whether the
content may replace a tracked manifest another owner holds is decided by the ledger's writer
under its head lock (ledger/write.py; docs/configuration.md, Owners): a 403 when it may not.

Idempotency-Key: the first response is stored in the same transaction as its decision. "The
same" request is judged on the canonical manifest, the one thing a decision depends on
(whitespace, key order, JSON or YAML, `8.0`, a time's offset make no other body). Concurrent
repeats in this process wait for the first; one racing in another process loses at the
database's primary key and then answers from the stored response.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import msgspec
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.auth import Principal
from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import transaction
from supportgate.errors import ConflictError, Forbidden, UsageError
from supportgate.ledger.batches import Batch, DecisionWrite, IdempotentAnswer, Tracking
from supportgate.ledger.decisions import decision_body
from supportgate.ledger.writer import IdempotencyConflict, LedgerWriter
from supportgate.manifests import (
    Format,
    HardwareManifest,
    Manifest,
    decode_manifest,
)
from supportgate.manifests.common import END_GUARD
from supportgate.matrix.services import MatrixService
from supportgate.policy import PolicyEngine
from supportgate.policy.inputs import hardware_ref
from supportgate.threads import in_thread, thread_twin
from supportgate.waivers.services import WaiverService

from . import repository
from .evaluator import Evaluation, Evaluator, Subject

CREATED = 201
MAX_IDEMPOTENCY_KEY = 255
IDEMPOTENCY_KEY_PATTERN = (
    rf"^[ \t]*[!-~](?:[ -~]{{0,{MAX_IDEMPOTENCY_KEY - 2}}}[!-~])?[ \t]*$" + END_GUARD
)
"""1 to MAX_IDEMPOTENCY_KEY printable ASCII characters; spaces and tabs around them are not
part of the key (HTTP strips them from a header value; so does `_check_idempotency_key`)."""
OWNER_FIELD = "$.metadata.owner"


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
        waivers: WaiverService,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
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
        if key is None:
            return await self._record(await self._judge(body, fmt, principal, None))
        slot = (principal.key_id, key)
        while (waiting := self._in_flight.get(slot)) is not None:
            await asyncio.shield(waiting)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._in_flight[slot] = done
        try:
            judged = await self._judge(body, fmt, principal, key)
            if isinstance(judged, Answer):
                return judged
            try:
                return await self._record(judged)
            except IdempotencyConflict:
                stored = await self._stored_in_thread(principal.key_id, key, judged.digest)
                if stored is None:  # pragma: no cover - the conflict means a row exists
                    raise
                return stored
        finally:
            done.set_result(None)
            del self._in_flight[slot]

    @in_thread
    def _judge(
        self, body: bytes, fmt: Format, principal: Principal, key: str | None
    ) -> _Judged | Answer:
        """Everything before the write, in one hop off the event loop: decoding, the
        database's reads and the evaluation (0.5-1.2 ms for a new manifest; an organisation's
        rule may take seconds) would hold every other request meanwhile."""
        manifest = decode_manifest(body, fmt=fmt)
        check_owner(principal, manifest)
        now = self._clock.now()
        evaluator = Evaluator(self._engine, self._matrices.current(now).loaded)
        waivers = self._waivers.active_for(manifest.kind, manifest.metadata.name, now)
        subject = Subject(manifest, waivers=waivers)
        pool = self._hardware(manifest)
        policy_input = evaluator.policy_input(subject, evaluated_at=now, hardware=lambda _n: pool)
        digest = policy_input.manifest_digest
        claim = None
        if key is not None:
            stored = self._stored(principal.key_id, key, digest)
            if stored is not None:
                return stored
            claim = IdempotentAnswer(
                api_key_id=principal.key_id, key=key, request_digest=digest, status_code=CREATED
            )
        evaluation = evaluator.decide(subject, policy_input, now)
        write = DecisionWrite(
            decision=evaluation.decision,
            policy_input=policy_input.canonical.decode(),
            tracking=Tracking(
                content=policy_input.document["manifest"],
                content_digest=digest,
                owner=manifest.metadata.owner,
                hardware_ref=hardware_ref(manifest),
                changes_owner=principal.role == "admin",
            ),
            idempotency=claim,
        )
        return _Judged(manifest, digest, evaluation, write)

    async def _record(self, judged: _Judged | Answer) -> Answer:
        if isinstance(judged, Answer):
            return judged
        decision = judged.write.decision
        applied = await asyncio.wrap_future(self._ledger.submit(Batch(decisions=[judged.write])))
        leaf_index = applied.decisions[0]
        if leaf_index is None:  # the writer did not admit it: Tracking.may_replace said no
            raise owned_by_another(judged.manifest)
        body = applied.bodies.get(decision.id) or decision_body(decision, leaf_index)
        return Answer(status=CREATED, body=body, evaluation=judged.evaluation)

    def _hardware(self, manifest: Manifest) -> HardwareManifest | None:
        ref = hardware_ref(manifest)
        if ref is None:
            return None
        with transaction(self._sessions) as session:
            row = repository.tracked(session, "HardwareManifest", ref)
            return None if row is None else msgspec.convert(row.content, HardwareManifest)

    def _stored(self, api_key_id: int, key: str, digest: str) -> Answer | None:
        with transaction(self._sessions) as session:
            row = repository.stored_response(session, api_key_id, key)
            if row is None:
                return None
            stored_digest, status, response = row.request_digest, row.status_code, row.response_body
        if stored_digest != digest:
            raise ConflictError(
                "this key was already used with a different request body", field="Idempotency-Key"
            )
        return Answer(status=status, body=response, evaluation=None)

    _stored_in_thread = thread_twin(_stored)


@dataclass(frozen=True, slots=True)
class _Judged:
    manifest: Manifest
    digest: str
    """Of the canonical manifest: the tracked content's and an Idempotency-Key's request's."""
    evaluation: Evaluation
    write: DecisionWrite


def check_owner(principal: Principal, manifest: Manifest) -> None:
    owner = manifest.metadata.owner
    if not principal.acts_for(owner):
        raise Forbidden(
            f"key {principal.name!r} acts for {', '.join(principal.owners)}, "
            f"not for metadata.owner {owner!r}",
            field=OWNER_FIELD,
        )


def owned_by_another(manifest: Manifest) -> Forbidden:
    return Forbidden(
        f"the tracked {manifest.kind} {manifest.metadata.name!r} has another owner "
        f"than {manifest.metadata.owner!r} (metadata.owner): only an admin's key "
        "that acts for its owner changes a tracked manifest's owner",
        field=OWNER_FIELD,
    )


def _check_idempotency_key(value: str) -> str:
    value = value.strip(" \t")
    if not 1 <= len(value) <= MAX_IDEMPOTENCY_KEY or not value.isascii() or not value.isprintable():
        raise UsageError(
            f"must be 1-{MAX_IDEMPOTENCY_KEY} printable ASCII characters", field="Idempotency-Key"
        )
    return value
