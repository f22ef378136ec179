"""The console shows nobody what the API would not: each console page declares the API routes
its data comes from (`opt["shows"]`), and the role it needs is the highest role those routes
need, read here from the API's own routes. A page added later must declare its sources."""

from __future__ import annotations

from litestar import Litestar
from litestar.routes import HTTPRoute

from supportgate.app import console_app
from supportgate.auth.guard import DEFAULT_ROLE, KeyGuard
from supportgate.auth.roles import ROLES, Role
from supportgate.console.pages import page_role

from ..api import Api
from .support import login


def api_roles(app: Litestar) -> dict[str, Role]:
    """`METHOD /path/{param}` -> the role the API's guard asks of it."""
    found: dict[str, Role] = {}
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or not route.path.startswith("/v1/"):
            continue
        for handler in route.route_handlers:
            for method in handler.http_methods - {"OPTIONS", "HEAD"}:
                found[f"{method} {route.path_format}"] = handler.opt.get("role", DEFAULT_ROLE)
    return found


def test_each_page_needs_the_highest_role_of_the_api_routes_it_shows(api: Api) -> None:
    served = api_roles(api.client.app)
    checked = {}
    for route in console_app(api.runtime, KeyGuard(api.runtime.keys, api.runtime.limits)).routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            if handler.opt.get("public") or handler.http_methods <= {"OPTIONS", "HEAD"}:
                continue
            sources = handler.opt.get("shows")
            assert sources, f"{route.path} must say which API routes its data comes from"
            unknown = set(sources) - set(served)
            assert not unknown, f"{route.path} names no API route {unknown}"
            needed = max((served[source] for source in sources), key=ROLES.index)
            assert page_role(handler) == needed, (route.path, sources)
            checked[route.path_format] = needed
    assert checked["/ui/webhooks"] == "admin"
    assert checked["/ui/manifests"] == "procurement"
    assert len(checked) >= 9


def test_procurement_sees_no_webhook_subscription(sqlite_api: Api) -> None:
    """The API keeps subscriptions (URLs, with any token in them, and receivers' error texts)
    for admins: so does the console, and its menu offers the page to admins only."""
    api = sqlite_api
    url = "http://127.0.0.1:9/hook?token=s3cret-in-the-url"
    hook = api.client.post("/v1/webhooks", json={"url": url}, headers=api.headers("admin"))
    assert hook.status_code == 201, hook.text
    assert api.client.get("/v1/webhooks", headers=api.headers("procurement")).status_code == 403

    login(api, "procurement")
    refused = api.client.get("/ui/webhooks")
    assert refused.status_code == 403
    assert "s3cret" not in refused.text
    assert 'href="/ui/webhooks"' not in api.client.get("/ui/manifests").text

    login(api, "admin")
    shown = api.client.get("/ui/webhooks")
    assert shown.status_code == 200
    assert "s3cret-in-the-url" in shown.text
    assert 'href="/ui/webhooks"' in api.client.get("/ui/manifests").text
