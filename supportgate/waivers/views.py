from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import msgspec

from supportgate.manifests.common import DNS_LABEL_RE, END_GUARD
from supportgate.manifests.decision import ManifestKind

MAX_JUSTIFICATION = 4096
LATEST_EXPIRY = datetime(2200, 1, 1, tzinfo=UTC)
"""expires_at must be before this: the policies compare times as int64 nanoseconds (up to
2262), and a time they cannot read would silently waive nothing."""

_SPACE = "".join(f"\\u{code:04x}" for code in range(0x10000) if chr(code).isspace())
NOT_BLANK_PATTERN = rf"^[^\u0000]*[^\u0000{_SPACE}][^\u0000]*$"
"""Text holding something besides white space (as `str.strip` counts it) and no NUL."""


class WaiverRequest(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """POST /v1/waivers. The types say what the service checks, but that `rule` is a deny
    rule of the loaded policies (supportgate.openapi.declare_request_rules documents it) and
    that `expires_at` is in the future, which no schema can say."""

    rule: Annotated[str, msgspec.Meta(description="a deny rule id (`port.production`)")]
    kind: ManifestKind
    name: Annotated[
        str,
        msgspec.Meta(
            description="the manifest's `metadata.name`", pattern=DNS_LABEL_RE + END_GUARD
        ),
    ]
    justification: Annotated[
        str,
        msgspec.Meta(
            max_length=MAX_JUSTIFICATION,
            description="why; not blank",
            pattern=NOT_BLANK_PATTERN,
        ),
    ]
    expires_at: Annotated[
        datetime,
        msgspec.Meta(
            description=f"RFC 3339 with a zone, in the future, before {LATEST_EXPIRY:%Y-%m-%d}",
        ),
    ]


class WaiverView(msgspec.Struct, frozen=True, kw_only=True):
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
