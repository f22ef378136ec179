"""HTTP: the admin's key API, /v1/keys. One service call each."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Router, delete, get, post
from litestar.params import FromPath, JSONBody

from supportgate.dependencies import Part, served
from supportgate.openapi import body, error

from .services import KeyService
from .views import CreatedKey, KeyPage, KeyRequest


class KeyController(Controller):
    path = "/v1/keys"
    tags = ["keys"]  # noqa: RUF012 - Litestar reads class attributes

    @get("/", opt={"role": "admin"}, summary="Every API key by name (revoked ones too)")
    async def list_keys(self, keys: Part[KeyService]) -> KeyPage:
        return KeyPage(items=await keys.list_keys_in_thread())

    @post(
        "/",
        opt={"role": "admin"},
        summary="Create an API key; the key is shown only here",
        responses={
            201: body(CreatedKey, "The key's listing, and the key in `key`, this once"),
            409: error(409),
        },
    )
    async def create(
        self, request: Request[Any, Any, Any], keys: Part[KeyService], data: JSONBody[KeyRequest]
    ) -> CreatedKey:
        created = await keys.create_in_thread(
            name=data.name, role=data.role, owners=data.owners, expires_in=data.expires_in
        )
        request.state["log"] = {"created_key": created.name, "created_role": created.role}
        return created

    @delete("/{name:str}", opt={"role": "admin"}, summary="Revoke an API key (its row stays)")
    async def revoke(
        self, request: Request[Any, Any, Any], keys: Part[KeyService], name: FromPath[str]
    ) -> None:
        await keys.revoke_in_thread(name)
        request.state["log"] = {"revoked_key": name}


def routes(keys: KeyService) -> Router:
    return served(KeyController, keys=keys)
