"""HTTP: POST /v1/evaluations, its dry run and the tracked-manifest endpoints."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, Router, delete, get, post
from litestar.params import FromPath, FromQuery, HeaderParameter

from supportgate.auth.guard import principal_of
from supportgate.dependencies import Part, served
from supportgate.evaluations.services import IDEMPOTENCY_KEY_PATTERN
from supportgate.fleet.services import FleetManifestPage, FleetService
from supportgate.http_paging import AsOf, Cursor, Limit
from supportgate.manifests.decision import Decision, ManifestKind, Verdict
from supportgate.manifests.decode import format_for_media_type
from supportgate.openapi import ManifestBody, ManifestsBody, OverlappingAnswers, body, error
from supportgate.pagination import DEFAULT_LIMIT

from .dry_run import DryRunService
from .services import EvaluationService
from .tracking import TrackingService
from .views import DecisionPage, DryRunAnswer, TrackedManifest, TrackedManifestPage


class EvaluationController(Controller):
    path = "/v1/evaluations"
    tags = ["evaluations"]  # noqa: RUF012 - Litestar reads class attributes

    @post(
        "/",
        opt={"role": "ci"},
        summary="Evaluate a manifest, record the decision, track it",
        operation_class=ManifestBody,
        responses={
            201: body(Decision, "The decision, recorded (or the first answer to this key)"),
            409: error(409),
        },
    )
    async def create(
        self,
        request: Request[Any, Any, Any],
        evaluations: Part[EvaluationService],
        idempotency_key: Annotated[
            str | None,
            HeaderParameter(
                name="Idempotency-Key",
                description="a repeat with the same key and body returns the first answer",
                schema_extra={"pattern": IDEMPOTENCY_KEY_PATTERN},
            ),
        ] = None,
    ) -> Response[bytes]:
        fmt = format_for_media_type(request.headers.get("content-type"))
        answer = await evaluations.submit(
            body=await request.body(),
            fmt=fmt,
            principal=principal_of(request),
            idempotency_key=idempotency_key,
        )
        if answer.evaluation is not None:
            decision = answer.evaluation.decision
            # the scope's own dict: `request.state` wraps it in a new State at each access
            request.scope.setdefault("state", {})["log"] = {
                "manifest": f"{decision.manifest.kind}/{decision.manifest.name}",
                "verdict": decision.verdict,
            }
        return Response(answer.body, status_code=answer.status, media_type="application/json")


class ManifestController(Controller):
    path = "/v1/manifests"
    tags = ["manifests"]  # noqa: RUF012 - Litestar reads class attributes

    @get(
        "/",
        opt={"role": "procurement"},
        summary="Tracked manifests with their latest decision (with as_of: at that time)",
        operation_class=OverlappingAnswers,
    )
    async def list_tracked(
        self,
        tracking: Part[TrackingService],
        fleet: Part[FleetService],
        *,
        kind: FromQuery[ManifestKind | None] = None,
        verdict: FromQuery[Verdict | None] = None,
        owner: FromQuery[str | None] = None,
        as_of: AsOf = None,
        cursor: Cursor = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> TrackedManifestPage | FleetManifestPage:
        if as_of is not None:  # from the log: the manifests tracked then (supportgate/fleet/)
            return await fleet.manifests_page(
                as_of, kind=kind, verdict=verdict, owner=owner, cursor=cursor, limit=limit
            )
        return await tracking.page_in_thread(
            kind=kind, verdict=verdict, owner=owner, cursor=cursor, limit=limit
        )

    @get("/{kind:str}/{name:str}", opt={"role": "procurement"}, summary="One tracked manifest")
    async def one(
        self, tracking: Part[TrackingService], kind: FromPath[ManifestKind], name: FromPath[str]
    ) -> TrackedManifest:
        return await tracking.one_in_thread(kind, name)

    @get(
        "/{kind:str}/{name:str}/history",
        opt={"role": "procurement"},
        summary="Every decision for a manifest, newest first",
    )
    async def history(
        self,
        tracking: Part[TrackingService],
        kind: FromPath[ManifestKind],
        name: FromPath[str],
        *,
        cursor: Cursor = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> DecisionPage:
        return await tracking.history_in_thread(kind, name, cursor=cursor, limit=limit)

    @delete(
        "/{kind:str}/{name:str}",
        opt={"role": "admin"},
        summary="Stop tracking a manifest (its history stays)",
    )
    async def untrack(
        self,
        request: Request[Any, Any, Any],
        tracking: Part[TrackingService],
        kind: FromPath[ManifestKind],
        name: FromPath[str],
    ) -> None:
        by = principal_of(request).name
        await tracking.untrack_in_thread(kind, name, by=by)


class DryRunController(Controller):
    path = "/v1/evaluations/dry-run"
    tags = ["evaluations"]  # noqa: RUF012 - Litestar reads class attributes

    @post(
        "/",
        opt={"role": "ci"},
        summary="The decisions manifests would get, with nothing recorded",
        operation_class=ManifestsBody,
        status_code=200,
    )
    async def dry_run(
        self, request: Request[Any, Any, Any], dry_runs: Part[DryRunService]
    ) -> DryRunAnswer:
        fmt = format_for_media_type(request.headers.get("content-type"))
        return await dry_runs.judge(
            body=await request.body(), fmt=fmt, principal=principal_of(request)
        )


def routes(
    evaluations: EvaluationService,
    dry_runs: DryRunService,
    tracking: TrackingService,
    fleet: FleetService,
) -> Router:
    return served(
        EvaluationController,
        DryRunController,
        ManifestController,
        evaluations=evaluations,
        dry_runs=dry_runs,
        tracking=tracking,
        fleet=fleet,
    )
