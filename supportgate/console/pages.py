"""What each console page needs: the role, and the API routes whose data it shows (`shows`); its
role is the highest of theirs: it shows nobody what the API would not (docs/console.md, Access)."""

from __future__ import annotations

from typing import Any

from litestar.handlers.base import BaseRouteHandler

from supportgate.auth.roles import Principal, Role, role_allows

CONSOLE_ROLE: Role = "procurement"
"""The least role any page needs: a key below it gets no session."""


def page(role: Role, *shows: str) -> dict[str, Any]:
    """A page's `opt`: the role it needs and the API routes it shows (`"GET /v1/audit"`)."""
    return {"role": role, "shows": shows}


def page_role(handler: BaseRouteHandler) -> Role:
    role: Role = handler.opt.get("role", CONSOLE_ROLE)
    return role


MANIFESTS = page("procurement", "GET /v1/manifests")
MANIFEST = page(
    "procurement",
    "GET /v1/manifests/{kind}/{name}",
    "GET /v1/manifests/{kind}/{name}/history",
    "GET /v1/audit",
)
AUDIT = page("procurement", "GET /v1/audit")
MATRIX = page("procurement", "GET /v1/matrix/versions", "GET /v1/matrix/versions/{version}")
IMPACT_FORM = page("procurement", "GET /v1/matrix")
IMPACT = page("procurement", "POST /v1/matrix/impact")
ALERTS = page("procurement", "GET /v1/alerts")
WEBHOOKS = page("admin", "GET /v1/webhooks", "GET /v1/webhooks/{webhook_id}/deliveries")
WAIVERS = page("procurement", "GET /v1/waivers")
RULES = page("procurement", "GET /v1/policy")
FLEET = page("procurement", "GET /v1/reports/fleet", "GET /v1/manifests")
FLEET_OSCAL = page("procurement", "GET /v1/reports/oscal")

MENU: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("/manifests", "Manifests", MANIFESTS),
    ("/audit", "Audit", AUDIT),
    ("/matrix", "Matrix", MATRIX),
    ("/impact", "Impact", IMPACT_FORM),
    ("/alerts", "Alerts", ALERTS),
    ("/fleet", "Fleet on a date", FLEET),
    ("/webhooks", "Webhooks", WEBHOOKS),
    ("/waivers", "Waivers", WAIVERS),
    ("/rules", "Rules", RULES),
)


def menu(principal: Principal | None) -> list[tuple[str, str]]:
    if principal is None:
        return []
    return [(href, label) for href, label, opt in MENU if role_allows(principal.role, opt["role"])]
