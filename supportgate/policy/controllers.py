"""HTTP: GET /v1/policy, the policies in force and their rules; GET
/v1/bundles/supportgate.tar.gz, the signed OPA bundle, for OPA (bundle_server.py)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, Router, get
from litestar.exceptions import NotAuthorizedException
from litestar.openapi.datastructures import ResponseSpec
from litestar.status_codes import HTTP_304_NOT_MODIFIED

from supportgate.dependencies import Part, served
from supportgate.errors import NotFound
from supportgate.openapi import BUNDLE_SECURITY_SCHEME, error

from .bundle_server import TOKEN_SETTING, BundleServer
from .live import LivePolicies
from .opa_bundle import BUNDLE_FILE, KEY_SETTING
from .views import PolicyView, policy_view

BUNDLE_MEDIA_TYPE = "application/gzip"


class BundleController(Controller):
    path = "/v1/bundles"
    tags = ["policy"]  # noqa: RUF012 - Litestar reads class attributes

    # Public to the API keys' guard: OPA presents the bundle token instead (checked below).
    @get(
        f"/{BUNDLE_FILE}",
        opt={"public": True},
        summary="The policies and default matrix as a signed OPA bundle (OPA's bundle token)",
        media_type=BUNDLE_MEDIA_TYPE,
        security=[{BUNDLE_SECURITY_SCHEME: []}],
        responses={
            304: ResponseSpec(None, description="The If-None-Match ETag is the current one"),
            401: error(401, "No bundle token, or another one"),
            404: error(404, "The service serves no bundle (it has no bundle signing key)"),
        },
    )
    async def bundle(
        self, request: Request[Any, Any, Any], bundles: Part[BundleServer]
    ) -> Response[bytes]:
        if bundles.bundle is None:
            raise NotFound(
                f"this service serves no OPA bundle ({KEY_SETTING} is unset)", field="path"
            )
        if not bundles.admits(request.headers.get("authorization")):
            raise NotAuthorizedException(
                f"send the bundle token ({TOKEN_SETTING}) as `Authorization: Bearer <token>`"
            )
        headers = {"ETag": bundles.bundle.etag, "Cache-Control": "no-cache"}
        if bundles.unchanged(request.headers.get("if-none-match")):
            return Response(b"", status_code=HTTP_304_NOT_MODIFIED, headers=headers)
        return Response(bundles.bundle.archive, media_type=BUNDLE_MEDIA_TYPE, headers=headers)


class PolicyController(Controller):
    path = "/v1/policy"
    tags = ["policy"]  # noqa: RUF012 - Litestar reads class attributes

    @get(
        "/",
        opt={"role": "procurement"},
        summary="The policy revision in force, its organisation bundles and every rule",
    )
    async def policy(self, policies: Part[LivePolicies]) -> PolicyView:
        return policy_view(policies.bundle, policies.catalog, policies.last_error)


def routes(bundles: BundleServer, policies: LivePolicies) -> Router:
    return served(BundleController, PolicyController, bundles=bundles, policies=policies)
