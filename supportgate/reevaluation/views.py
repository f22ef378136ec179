"""Bodies of the re-evaluation endpoints."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from supportgate.errors import UnsupportedMediaType
from supportgate.manifests.common import DnsLabel
from supportgate.manifests.decision import Cause, ManifestKind
from supportgate.manifests.decode import decode_json, format_for_media_type


class SweepCounts(msgspec.Struct, frozen=True, kw_only=True):
    evaluated: int
    changed: int
    failed: int


class SweepView(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    status: str
    cause: Cause
    trigger: str
    counts: SweepCounts
    matrix_version: str | None
    policy_revision: str | None
    requested_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    duration_seconds: float | None
    error: str | None


class ManifestKey(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    kind: ManifestKind
    name: DnsLabel


MAX_MANIFESTS = 10_000


class SweepRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """POST /v1/reevaluations (the body is optional): `manifests` limits the sweep to these
    tracked manifests (at least one); without it every tracked manifest is re-evaluated."""

    manifests: (
        Annotated[list[ManifestKey], msgspec.Meta(min_length=1, max_length=MAX_MANIFESTS)] | None
    ) = None


def decode_request(body: bytes, content_type: str | None) -> SweepRequest | None:
    """A body of only whitespace is refused (`$`) rather than read as a sweep of the whole
    fleet."""
    if not body:
        return None
    if format_for_media_type(content_type) != "json":
        raise UnsupportedMediaType("send the body as application/json", field="Content-Type")
    return decode_json(body, SweepRequest)
