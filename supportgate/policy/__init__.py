"""Policy engines behind one interface: in-process regorus, or an OPA server."""

from __future__ import annotations

from supportgate.config import Settings
from supportgate.errors import UsageError

from .bundle import PolicyBundle as PolicyBundle
from .embedded import EmbeddedEngine as EmbeddedEngine
from .engine import PolicyEngine as PolicyEngine


def build_engine(
    bundle: PolicyBundle, settings: Settings, served_revision: str | None
) -> PolicyEngine:
    if not settings.opa_url:
        if settings.evaluation_process:
            from .engine_process import ProcessEngine  # noqa: PLC0415 - `check` does without

            return ProcessEngine(bundle)
        return EmbeddedEngine(bundle)
    if served_revision is None:
        raise UsageError(
            "OPA pulls the policies as a bundle the service signs: set the signing key",
            field="SUPPORTGATE_BUNDLE_SIGNING_KEY_FILE",
        )
    if not settings.opa_token:
        raise UsageError(
            "OPA's API answers only with a token (--authentication=token): set it",
            field="SUPPORTGATE_OPA_TOKEN",
        )
    from .opa import OpaEngine  # noqa: PLC0415 - only OPA users pay for its client

    return OpaEngine(
        settings.opa_url,
        bundle,
        bundle_revision=served_revision,
        token=settings.opa_token,
        timeout_s=settings.opa_timeout,
    )
