"""What the key API and `keys list` show of a key: never its secret or hash, only its prefix."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from .roles import Role

NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
MAX_OWNERS = 100
OWNER = r"^[^\u0000-\u001f\u007f]{1,255}$"
"""An owner a key acts for: 1-255 characters, no control characters (a metadata.owner)."""
DURATION = r"^(?:[1-9][0-9]{0,2}d|[1-9][0-9]{0,3}h|[1-9][0-9]{0,5}m)$"
"""How long a key lives: `90d`, `12h`, `30m`, under 1000 days. The pattern is the whole rule,
so the API's document declares all of it."""


class KeyView(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    role: str
    owners: list[str]
    """The `metadata.owner` values it may post for; empty: every owner."""
    prefix: str
    """The key's first characters, to tell keys apart."""
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    """Written at most once a minute per key: up to that late."""
    revoked_at: datetime | None


class CreatedKey(KeyView, frozen=True, kw_only=True):
    """A key just created: the secret is in `key`, this once; only its hash is stored."""

    key: str


class KeyPage(msgspec.Struct, frozen=True, kw_only=True):
    items: list[KeyView]


class KeyRequest(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """POST /v1/keys; the service checks each field too, and names it."""

    name: Annotated[
        str, msgspec.Meta(description="1-64 letters, digits, '.', '_' or '-'", pattern=NAME)
    ]
    role: Role
    owners: Annotated[
        list[Annotated[str, msgspec.Meta(pattern=OWNER)]],
        msgspec.Meta(
            max_length=MAX_OWNERS,
            description="the metadata.owner values it may post for (ci and procurement keys "
            "only; an admin key acts for every owner); empty: every owner",
        ),
    ] = msgspec.field(default_factory=list)
    expires_in: (
        Annotated[
            str,
            msgspec.Meta(description="`90d`, `12h` or `30m`; none: forever", pattern=DURATION),
        ]
        | None
    ) = None
