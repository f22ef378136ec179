"""HTTP: webhook subscriptions and their delivery log (admin). One service call each."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Router, delete, get, post
from litestar.params import FromPath, FromQuery, JSONBody

from supportgate.auth.guard import principal_of
from supportgate.dependencies import Part, served
from supportgate.errors import NotFound
from supportgate.http_paging import Cursor, Limit
from supportgate.pagination import DEFAULT_LIMIT

from .services import WebhookService
from .views import DeliveryPage, DeliveryStatus, WebhookCreate, WebhookCreated, WebhookList


def _unknown(webhook_id: str) -> NotFound:
    return NotFound(f"no webhook subscription {webhook_id!r}", field="webhook_id")


class WebhookController(Controller):
    path = "/v1/webhooks"
    tags = ["webhooks"]  # noqa: RUF012 - Litestar reads class attributes

    @post(
        "/",
        opt={"role": "admin"},
        summary="Subscribe a URL to alerts; the answer holds its signing secret, shown once",
    )
    async def create(
        self,
        request: Request[Any, Any, Any],
        webhooks: Part[WebhookService],
        data: JSONBody[WebhookCreate],
    ) -> WebhookCreated:
        creator = principal_of(request).name
        created = await webhooks.create_in_thread(data, created_by=creator)
        request.state["log"] = {"webhook": created.id}
        return created

    @get("/", opt={"role": "admin"}, summary="Every webhook subscription, without secrets")
    async def subscriptions(self, webhooks: Part[WebhookService]) -> WebhookList:
        return await webhooks.subscriptions_in_thread()

    @delete(
        "/{webhook_id:str}",
        opt={"role": "admin"},
        summary="Delete a subscription with its pending deliveries and delivery log",
    )
    async def remove(self, webhooks: Part[WebhookService], webhook_id: FromPath[str]) -> None:
        if not await webhooks.delete_in_thread(webhook_id):
            raise _unknown(webhook_id)

    @get(
        "/{webhook_id:str}/deliveries",
        opt={"role": "admin"},
        summary="The delivery log: a subscription's deliveries, newest first, with attempts",
    )
    async def deliveries(
        self,
        webhooks: Part[WebhookService],
        webhook_id: FromPath[str],
        *,
        status: FromQuery[DeliveryStatus | None] = None,
        cursor: Cursor = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> DeliveryPage:
        page = await webhooks.deliveries_in_thread(
            webhook_id, status=status, cursor=cursor, limit=limit
        )
        if page is None:
            raise _unknown(webhook_id)
        return page


def routes(webhooks: WebhookService) -> Router:
    return served(WebhookController, webhooks=webhooks)
