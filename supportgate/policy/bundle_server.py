"""Serving the signed OPA bundle to the OPA that pulls it (docs/opa.md), with the bundle token
rather than an API key, which OPA has not; OPA polls, and the ETag spares it the unchanged.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from supportgate.config import Settings
from supportgate.errors import UsageError

from .bundle import PolicyBundle
from .opa_bundle import KEY_SETTING, BundleSigner, OpaBundle, build_bundle

TOKEN_SETTING = "SUPPORTGATE_BUNDLE_TOKEN"  # noqa: S105 - the variable's name, no secret


@dataclass(slots=True)
class BundleServer:
    bundle: OpaBundle | None  # None without a signing key: the service runs without OPA
    token: str | None
    signer: BundleSigner | None = None

    @classmethod
    def from_settings(
        cls, settings: Settings, policies: PolicyBundle, default_matrix: Mapping[str, Any]
    ) -> BundleServer:
        if settings.bundle_signing_key_file is None:
            return cls(bundle=None, token=None)
        if not settings.bundle_token:
            raise UsageError(
                f"the bundle is served only to whoever presents this token (OPA), and "
                f"{KEY_SETTING} is set: set a token",
                field=TOKEN_SETTING,
            )
        signer = BundleSigner.from_file(settings.bundle_signing_key_file)
        return cls(
            bundle=build_bundle(policies, default_matrix, signer),
            token=settings.bundle_token,
            signer=signer,
        )

    def publish(self, policies: PolicyBundle, default_matrix: Mapping[str, Any]) -> str | None:
        if self.signer is None:
            return None
        self.bundle = build_bundle(policies, default_matrix, self.signer)
        return self.bundle.revision

    def admits(self, authorization: str | None) -> bool:
        if self.token is None or not authorization:
            return False
        scheme, _, value = authorization.partition(" ")
        return scheme.lower() == "bearer" and secrets.compare_digest(
            value.strip().encode(), self.token.encode()
        )

    def unchanged(self, if_none_match: str | None) -> bool:
        if self.bundle is None or not if_none_match:
            return False
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return self.bundle.etag in tags or "*" in tags
