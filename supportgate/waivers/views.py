"""Request and response bodies of the waiver endpoints."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from supportgate.manifests.decision import ManifestKind

NAME_PATTERN = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"  # metadata.name (docs/manifests.md)
MAX_JUSTIFICATION = 4096


class WaiverRequest(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """POST /v1/waivers: waive `rule` for manifest (kind, name) until `expires_at`."""

    rule: Annotated[str, msgspec.Meta(description="a deny rule id (`port.production`)")]
    kind: ManifestKind
    name: Annotated[str, msgspec.Meta(description="the manifest's `metadata.name`")]
    justification: Annotated[
        str, msgspec.Meta(max_length=MAX_JUSTIFICATION, description="why; not blank")
    ]
    expires_at: Annotated[
        datetime, msgspec.Meta(description="RFC 3339 with a time zone, in the future")
    ]


class WaiverView(msgspec.Struct, frozen=True, kw_only=True):
    """A waiver as stored; `deleted_at`/`deleted_by` are set once it was deleted."""

    id: str
    rule: str
    kind: ManifestKind
    name: str
    justification: str
    expires_at: datetime
    created_by: str
    created_at: datetime
    deleted_at: datetime | None = None
    deleted_by: str | None = None


class WaiverPage(msgspec.Struct, frozen=True, kw_only=True):
    items: list[WaiverView]
    next_cursor: str | None
