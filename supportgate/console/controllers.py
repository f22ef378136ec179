"""HTTP: the console's pages under /ui. One service call each; pages are templates."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Controller, MediaType, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, QueryParameter
from litestar.response import Redirect, Stream, Template
from litestar.status_codes import HTTP_303_SEE_OTHER

from supportgate.audit.controllers import CSV_MEDIA_TYPE
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
    Query,
)
from .session import CONSOLE_COOKIE, CONSOLE_PATH, local_target, login_cookies, logout_cookies

PUBLIC = {"public": True}
ConsoleDep = NamedDependency[ConsoleService]
LoginsDep = NamedDependency[ConsoleSessions]
KeyGuardDep = NamedDependency[KeyGuard]


def _query(request: Request[Any, Any, Any], fields: tuple[str, ...]) -> Query:
    return Query.of(fields, {name: request.query_params.get(name) for name in fields})


async def _fleet_file(
    console: ConsoleService, day: str | None, what: FleetFile, filename: str
) -> Response[bytes]:
    found, body = await console.fleet_file(day, what)
    media_type = MediaType.JSON if what == "oscal" else CSV_MEDIA_TYPE
    return Response(body, media_type=media_type, headers=attachment(filename.format(found)))


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

    @get("/manifests", opt=MANIFESTS)
    async def manifests(
        self,
        request: Request[Any, Any, Any],
        console: ConsoleDep,
        cursor: FromQuery[str | None] = None,
    ) -> Template:
        query = _query(request, MANIFEST_FIELDS)
        page = await console.manifests(query, cursor=cursor)
        return render(request, "manifests.html.j2", page=page)

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

    @get("/audit", opt=AUDIT)
    async def audit(
        self,
        request: Request[Any, Any, Any],
        console: ConsoleDep,
        cursor: FromQuery[str | None] = None,
    ) -> Template:
        query = _query(request, AUDIT_FIELDS)
        page = await console.audit(query, cursor=cursor)
        return render(request, "audit.html.j2", page=page)

    @get("/audit.csv", opt=AUDIT)
    async def audit_csv(self, request: Request[Any, Any, Any], console: ConsoleDep) -> Stream:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        return Stream(
            await console.audit_csv(_query(request, AUDIT_FIELDS)),
            media_type=CSV_MEDIA_TYPE,
            headers={
                "Content-Type": CSV_MEDIA_TYPE,
                **attachment(f"supportgate-audit-{stamp}.csv"),
            },
        )

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

    @get("/alerts", opt=ALERTS)
    async def alerts(
        self,
        request: Request[Any, Any, Any],
        console: ConsoleDep,
        cursor: FromQuery[str | None] = None,
    ) -> Template:
        query = _query(request, ALERT_FIELDS)
        page = await console.alerts(query, cursor=cursor)
        return render(request, "alerts.html.j2", page=page)

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

    @get("/fleet.csv", opt=FLEET)
    async def fleet_csv(
        self, console: ConsoleDep, day: FromQuery[str | None] = None
    ) -> Response[bytes]:
        return await _fleet_file(console, day, "report", "supportgate-fleet-{}.csv")

    @get("/fleet.manifests.csv", opt=FLEET)
    async def fleet_manifests_csv(
        self, console: ConsoleDep, day: FromQuery[str | None] = None
    ) -> Response[bytes]:
        return await _fleet_file(console, day, "manifests", "supportgate-fleet-manifests-{}.csv")

    @get("/fleet.oscal.json", opt=FLEET_OSCAL)
    async def fleet_oscal(
        self, console: ConsoleDep, day: FromQuery[str | None] = None
    ) -> Response[bytes]:
        return await _fleet_file(console, day, "oscal", "supportgate-fleet-{}.oscal.json")

    @get("/webhooks", opt=WEBHOOKS)
    async def webhooks(self, request: Request[Any, Any, Any], console: ConsoleDep) -> Template:
        return render(request, "webhooks.html.j2", subscriptions=await console.webhooks())

    @get("/waivers", opt=WAIVERS)
    async def waivers(
        self,
        request: Request[Any, Any, Any],
        console: ConsoleDep,
        cursor: FromQuery[str | None] = None,
    ) -> Template:
        query = _query(request, WAIVER_FIELDS)
        page = await console.waivers(query, cursor=cursor)
        return render(request, "waivers.html.j2", page=page)

    @get("/rules", opt=RULES)
    async def rules(self, request: Request[Any, Any, Any], console: ConsoleDep) -> Template:
        return render(request, "rules.html.j2", page=console.rules())
