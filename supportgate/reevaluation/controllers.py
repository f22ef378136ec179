"""HTTP: POST /v1/reevaluations (start a sweep now, 202), GET /v1/reevaluations/{id}."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Router, get, post
from litestar.openapi.spec import OpenAPIMediaType, RequestBody
from litestar.params import FromPath

from supportgate.dependencies import Part, served
from supportgate.errors import NotFound
from supportgate.openapi import RawBody, RawSchema, body, inlined_schema

from .services import ReevaluationService
from .views import SweepRequest, SweepView, decode_request

ACCEPTED = 202


class SweepRequestBody(RawBody):
    def body(self) -> RequestBody:
        return RequestBody(
            content={
                "application/json": OpenAPIMediaType(
                    schema=RawSchema(document=inlined_schema(SweepRequest))
                )
            },
            description="Optional: limit the sweep to these tracked manifests",
            required=False,
        )


class ReevaluationController(Controller):
    path = "/v1/reevaluations"
    tags = ["reevaluations"]  # noqa: RUF012 - Litestar reads class attributes

    @post(
        "/",
        opt={"role": "admin"},
        status_code=ACCEPTED,
        summary="Re-evaluate the tracked manifests now (all, or those named); 202 with the sweep",
        operation_class=SweepRequestBody,
        responses={ACCEPTED: body(SweepView, "The sweep, queued; poll GET .../{id}")},
    )
    async def start(
        self, request: Request[Any, Any, Any], reevaluation: Part[ReevaluationService]
    ) -> SweepView:
        wanted = decode_request(await request.body(), request.headers.get("content-type"))
        sweep = await reevaluation.request_now(wanted)
        request.state["log"] = {"sweep_id": sweep.id}
        return sweep

    @get(
        "/{sweep_id:str}",
        opt={"role": "admin"},
        summary="A sweep: status, cause, trigger, counts, times",
    )
    async def one(
        self, reevaluation: Part[ReevaluationService], sweep_id: FromPath[str]
    ) -> SweepView:
        found = await reevaluation.view_in_thread(sweep_id)
        if found is None:
            raise NotFound(f"no sweep {sweep_id!r}", field="sweep_id")
        return found


def routes(reevaluation: ReevaluationService) -> Router:
    return served(ReevaluationController, reevaluation=reevaluation)
