"""HTTP: the console's pages under /ui. One service call each; pages are templates."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from litestar import Controller, MediaType, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import FromPath, FromQuery, QueryParameter
from litestar.response import Redirect, Stream, Template
from litestar.status_codes import HTTP_303_SEE_OTHER

from supportgate.audit.controllers import CSV_MEDIA_TYPE, csv_download
from supportgate.auth.guard import KeyGuard
from supportgate.auth.roles import role_allows
from supportgate.http_download import attachment

from .logins import ConsoleSessions
from .pages import (
    ALERTS,
    AUDIT,
    CONSOLE_ROLE,
    FLEET,
    FLEET_OSCAL,
    IMPACT,
    IMPACT_FORM,
    MANIFEST,
    MANIFESTS,
    MATRIX,
    RULES,
    WAIVERS,
    WEBHOOKS,
)
from .rendering import error_page, render
from .services import (
    ALERT_FIELDS,
    AUDIT_FIELDS,
    MANIFEST_FIELDS,
    WAIVER_FIELDS,
    ConsoleService,
    FleetFile,
    ListPage,
    Query,
)
from .session import CONSOLE_COOKIE, CONSOLE_PATH, local_target, login_cookies, logout_cookies

PUBLIC = {"public": True}
ConsoleDep = NamedDependency[ConsoleService]
LoginsDep = NamedDependency[ConsoleSessions]
KeyGuardDep = NamedDependency[KeyGuard]


def _query(request: Request[Any, Any, Any], fields: tuple[str, ...]) -> Query:
    return Query.of(fields, {name: request.query_params.get(name) for name in fields})


def _fleet_file(path: str, opt: dict[str, Any], what: FleetFile, filename: str) -> HTTPRouteHandler:
    """A download of the fleet at the end of `?day=` (`filename` names it with the day)."""

    async def fleet_file(console: ConsoleDep, day: FromQuery[str | None] = None) -> Response[bytes]:
        found, body = await console.fleet_file(day, what)
        media_type = MediaType.JSON if what == "oscal" else CSV_MEDIA_TYPE
        return Response(body, media_type=media_type, headers=attachment(filename.format(found)))

    return get(path, opt=opt)(fleet_file)


def _list_page(
    path: str,
    opt: dict[str, Any],
    fields: tuple[str, ...],
    read: Callable[..., Awaitable[ListPage[Any]]],
) -> HTTPRouteHandler:
    """Template `<path>.html.j2`; its filters from the query string."""

    async def list_page(
        request: Request[Any, Any, Any], console: ConsoleDep, cursor: FromQuery[str | None] = None
    ) -> Template:
        page = await read(console, _query(request, fields), cursor=cursor)
        return render(request, f"{path.strip('/')}.html.j2", page=page)

    return get(path, opt=opt)(list_page)


SHAPED_PAGES = (  # the pages of one shape each: lists and downloads
    _list_page("/manifests", MANIFESTS, MANIFEST_FIELDS, ConsoleService.manifests),
    _list_page("/audit", AUDIT, AUDIT_FIELDS, ConsoleService.audit),
    _list_page("/alerts", ALERTS, ALERT_FIELDS, ConsoleService.alerts),
    _list_page("/waivers", WAIVERS, WAIVER_FIELDS, ConsoleService.waivers),
    _fleet_file("/fleet.csv", FLEET, "report", "supportgate-fleet-{}.csv"),
    _fleet_file("/fleet.manifests.csv", FLEET, "manifests", "supportgate-fleet-manifests-{}.csv"),
    _fleet_file("/fleet.oscal.json", FLEET_OSCAL, "oscal", "supportgate-fleet-{}.oscal.json"),
)


class SessionController(Controller):
    @get("/login", opt=PUBLIC)
    async def login_form(
        self,
        request: Request[Any, Any, Any],
        next_page: Annotated[str | None, QueryParameter(name="next")] = None,
    ) -> Template:
        return render(request, "login.html.j2", next_page=local_target(next_page), error=None)

    @post("/login", opt=PUBLIC, status_code=HTTP_303_SEE_OTHER)
    async def login(
        self, request: Request[Any, Any, Any], logins: LoginsDep, key_guard: KeyGuardDep
    ) -> Template | Redirect:
        form = await request.form()
        secret, target = str(form.get("key") or "").strip(), local_target(form.get("next"))
        principal = await key_guard.authenticate(request, secret) if secret else None
        if principal is None:
            error = "unknown API key" if secret else "enter an API key"
            return render(request, "login.html.j2", status_code=401, next_page=target, error=error)
        if not role_allows(principal.role, CONSOLE_ROLE):
            detail = f"the console needs the {CONSOLE_ROLE} role; key {principal.name!r} has "
            return error_page(request, 403, detail + principal.role)
        # A login replaces the session this browser had: an id planted before it opens nothing.
        await logins.end_in_thread(request.cookies.get(CONSOLE_COOKIE))
        session_id = await logins.begin_in_thread(principal)
        cookies = login_cookies(request, session_id, logins.cookie_seconds)
        return Redirect(target, status_code=HTTP_303_SEE_OTHER, cookies=cookies)

    @post("/logout", opt=PUBLIC, status_code=HTTP_303_SEE_OTHER)
    async def logout(self, request: Request[Any, Any, Any], logins: LoginsDep) -> Redirect:
        await logins.end_in_thread(request.cookies.get(CONSOLE_COOKIE))
        return Redirect(
            f"{CONSOLE_PATH}/login", status_code=HTTP_303_SEE_OTHER, cookies=logout_cookies(request)
        )


class PageController(Controller):
    @get("/", opt=MANIFESTS)
    async def home(self) -> Redirect:
        return Redirect(f"{CONSOLE_PATH}/manifests", status_code=HTTP_303_SEE_OTHER)

    @get("/manifests/{kind:str}/{name:str}", opt=MANIFEST)
    async def manifest(
        self,
        request: Request[Any, Any, Any],
        console: ConsoleDep,
        kind: FromPath[str],
        name: FromPath[str],
        *,
        cursor: FromQuery[str | None] = None,
        a: FromQuery[str | None] = None,
        b: FromQuery[str | None] = None,
    ) -> Template:
        page = await console.manifest(kind, name, cursor=cursor, a=a, b=b)
        return render(request, "manifest.html.j2", page=page)

    @get("/audit.csv", opt=AUDIT)
    async def audit_csv(self, request: Request[Any, Any, Any], console: ConsoleDep) -> Stream:
        return csv_download(await console.audit_csv(_query(request, AUDIT_FIELDS)))

    @get("/matrix", opt=MATRIX)
    async def matrix(
        self,
        request: Request[Any, Any, Any],
        console: ConsoleDep,
        old: FromQuery[str | None] = None,
        new: FromQuery[str | None] = None,
    ) -> Template:
        page = await console.matrix(old=old, new=new)
        return render(request, "matrix.html.j2", page=page)

    @get("/impact", opt=IMPACT_FORM)
    async def impact_form(self, request: Request[Any, Any, Any], console: ConsoleDep) -> Template:
        page = await console.impact_form()
        return render(request, "impact.html.j2", page=page)

    @post("/impact", opt=IMPACT, status_code=200)
    async def impact(self, request: Request[Any, Any, Any], console: ConsoleDep) -> Template:
        proposal = str((await request.form()).get("matrix") or "")
        page = await console.impact(proposal)
        return render(request, "impact.html.j2", status_code=page.status_code, page=page)

    @get("/fleet", opt=FLEET)
    async def fleet(
        self,
        request: Request[Any, Any, Any],
        console: ConsoleDep,
        earlier: Annotated[str | None, QueryParameter(name="from")] = None,
        later: Annotated[str | None, QueryParameter(name="to")] = None,
    ) -> Template:
        page = await console.fleet(earlier=earlier, later=later)
        return render(request, "fleet.html.j2", page=page)

    @get("/webhooks", opt=WEBHOOKS)
    async def webhooks(self, request: Request[Any, Any, Any], console: ConsoleDep) -> Template:
        return render(request, "webhooks.html.j2", subscriptions=await console.webhooks())

    @get("/rules", opt=RULES)
    async def rules(self, request: Request[Any, Any, Any], console: ConsoleDep) -> Template:
        return render(request, "rules.html.j2", page=console.rules())
