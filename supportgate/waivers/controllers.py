"""HTTP: /v1/waivers (a deleted waiver's row stays, marked deleted). One service call each."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Router, delete, get, post
from litestar.params import FromPath, JSONBody, QueryParameter

from supportgate.auth.guard import principal_of
from supportgate.dependencies import Part, served
from supportgate.errors import NotFound
from supportgate.http_paging import Cursor, Kind, Limit, Name
from supportgate.pagination import DEFAULT_LIMIT

from .services import WaiverService
from .views import WaiverPage, WaiverRequest, WaiverView

Rule = Annotated[str | None, QueryParameter(description="the waived rule id (`port.production`)")]
Active = Annotated[
    bool | None,
    QueryParameter(description="true: in force now; false: deleted or expired"),
]


class WaiverController(Controller):
    path = "/v1/waivers"
    tags = ["waivers"]  # noqa: RUF012 - Litestar reads class attributes

    @post(
        "/",
        opt={"role": "admin"},
        summary="Waive a deny rule for one manifest until expires_at (re-evaluates it now)",
    )
    async def create(
        self,
        request: Request[Any, Any, Any],
        waivers: Part[WaiverService],
        data: JSONBody[WaiverRequest],
    ) -> WaiverView:
        created_by = principal_of(request).name
        created = await waivers.create_in_thread(data, created_by=created_by)
        request.state["log"] = {"waiver_id": created.id}
        return created

    @get("/", opt={"role": "procurement"}, summary="Waivers, newest first (deleted ones too)")
    async def list_waivers(
        self,
        waivers: Part[WaiverService],
        *,
        kind: Kind = None,
        name: Name = None,
        rule: Rule = None,
        active: Active = None,
        cursor: Cursor = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> WaiverPage:
        return await waivers.page_in_thread(
            kind=kind, name=name, rule=rule, active=active, cursor=cursor, limit=limit
        )

    @delete(
        "/{id:str}",
        opt={"role": "admin"},
        summary="Delete a waiver: it stops applying at once; its record stays for the audit",
    )
    async def remove(
        self,
        request: Request[Any, Any, Any],
        waivers: Part[WaiverService],
        id: FromPath[str],  # the contract's path: /v1/waivers/{id}
    ) -> None:
        deleted_by = principal_of(request).name
        deleted = await waivers.delete_in_thread(id, deleted_by=deleted_by)
        if deleted is None:
            raise NotFound(f"no waiver {id!r} that is not deleted", field="id")


def routes(waivers: WaiverService) -> Router:
    return served(WaiverController, waivers=waivers)
