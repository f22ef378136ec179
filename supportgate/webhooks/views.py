"""Request and response bodies of the webhook endpoints; docs/webhooks.md explains each field."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final, Literal

import msgspec

from supportgate.manifests.common import END_GUARD

MAX_URL_LENGTH = 2048
MAX_DESCRIPTION_LENGTH = 500

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_FOUR_NUMBERS = r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+(?![-A-Za-z0-9.])"  # httpx reads it as IPv4
_DNS_NAME = rf"(?!{_FOUR_NUMBERS}){_LABEL}(?:\.{_LABEL})*\.?"


def _ipv6() -> str:
    """RFC 3986's IPv6address: eight 16-bit pieces, one run of them written `::`."""
    h16, ls32 = "[0-9A-Fa-f]{1,4}", rf"(?:[0-9A-Fa-f]{{1,4}}:[0-9A-Fa-f]{{1,4}}|{_IPV4})"
    forms = [rf"(?:{h16}:){{6}}{ls32}", rf"::(?:{h16}:){{5}}{ls32}"]
    for before, after in ((0, 4), (1, 3), (2, 2), (3, 1), (4, 0)):
        pieces = f"(?:{h16}:){{{after}}}" if after else ""
        forms.append(rf"(?:(?:{h16}:){{0,{before}}}{h16})?::{pieces}{ls32}")
    forms += [rf"(?:(?:{h16}:){{0,5}}{h16})?::{h16}", rf"(?:(?:{h16}:){{0,6}}{h16})?::"]
    return "|".join(forms)


_PORT = r"[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]"
URL_PATTERN: Final = (
    r"^[Hh][Tt][Tt][Pp][Ss]?://"  # http or https, any case
    rf"(?:{_IPV4}|\[(?:{_ipv6()})\]|{_DNS_NAME})"  # the host
    rf"(?::(?:{_PORT}))?"  # a port from 1 to 65535
    r"(?:[/?#][!-~]*)?$" + END_GUARD  # path, query and fragment: printable ASCII, no space
)
"""The webhook URLs accepted (supportgate.webhooks.services.check_url checks it)."""
NOT_NUL: Final = r"^[^\u0000]*$"

WebhookState = Literal["active", "disabled"]
DeliveryStatus = Literal["pending", "delivered", "failed", "cancelled"]


class WebhookCreate(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    url: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=MAX_URL_LENGTH,
            description=(
                "http(s)://host[:port][/path]: a DNS name, an IPv4 or [IPv6] address, without "
                "user:password@. The host must not be, nor resolve to, an address that is not "
                "public (loopback such as localhost, 127.0.0.0/8 and ::1; private 10/8, "
                "172.16/12, 192.168/16, fc00::/7; link-local 169.254/16 and fe80::/10; "
                "multicast, reserved, unspecified, shared 100.64/10; the shorthand IPv4 "
                "spellings 127.1, 0x7f000001, 2130706433) unless SUPPORTGATE_WEBHOOK_ALLOW "
                "admits it: a 400 naming $.url (docs/webhooks.md)"
            ),
        ),
    ]
    description: (
        Annotated[
            str,
            msgspec.Meta(max_length=MAX_DESCRIPTION_LENGTH, extra_json_schema={"pattern": NOT_NUL}),
        ]
        | None
    ) = None


class Webhook(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    url: str
    description: str | None
    state: WebhookState
    created_at: datetime
    created_by: str | None
    consecutive_failures: int
    pending_deliveries: int
    disabled_at: datetime | None
    disabled_reason: str | None


class WebhookCreated(Webhook, frozen=True, kw_only=True):
    """The new subscription with its signing secret, shown this once."""

    secret: str


class WebhookList(msgspec.Struct, frozen=True, kw_only=True):
    """Every subscription, oldest first; one page (`next_cursor` is null)."""

    items: list[Webhook]
    next_cursor: str | None = None


class DeliveryAttempt(msgspec.Struct, frozen=True, kw_only=True):
    attempt: int
    at: datetime
    status_code: int | None
    error: str | None
    duration_ms: float


class Delivery(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    alert_id: str
    status: DeliveryStatus
    created_at: datetime
    next_attempt_at: datetime | None
    finished_at: datetime | None
    last_status_code: int | None
    last_error: str | None
    attempts: list[DeliveryAttempt]


class DeliveryPage(msgspec.Struct, frozen=True, kw_only=True):
    items: list[Delivery]
    next_cursor: str | None
