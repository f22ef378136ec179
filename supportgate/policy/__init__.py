"""Policy engines behind one interface: in-process regorus, or an OPA server."""

from __future__ import annotations

from .bundle import PolicyBundle
from .embedded import EmbeddedEngine
from .engine import LoadedMatrix, PolicyEngine
from .inputs import PolicyInput, build_input
from .memo import MemoizedEngine

__all__ = [
    "EmbeddedEngine",
    "LoadedMatrix",
    "MemoizedEngine",
    "PolicyBundle",
    "PolicyEngine",
    "PolicyInput",
    "build_engine",
    "build_input",
]


def build_engine(bundle: PolicyBundle, opa_url: str | None = None) -> PolicyEngine:
    """OPA when a URL is given, the in-process engine otherwise.

    The in-process engine keeps the answers for inputs the time cannot change (memo.py). OPA's
    are not kept: when the OPA server cannot answer, the service must say so (503), not answer
    from memory."""
    if opa_url:
        from .opa import OpaEngine  # noqa: PLC0415 - only OPA users pay for its client

        return OpaEngine(opa_url, bundle)
    return MemoizedEngine(EmbeddedEngine(bundle))
