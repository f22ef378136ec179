"""Pages: every console page is a template rendered here, with the CSRF token its forms
carry and who is logged in; errors become pages too (a login redirect, 403, 404, 400, 503)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined
from litestar import Request, Response
from litestar.exceptions import HTTPException, NotAuthorizedException
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Redirect, Template
from litestar.status_codes import HTTP_303_SEE_OTHER
from litestar.template.config import TemplateConfig
from litestar.types import ExceptionHandlersMap
from markupsafe import Markup, escape
from sqlalchemy.exc import DBAPIError

from supportgate.auth.guard import PRINCIPAL_STATE_KEY
from supportgate.errors import DatabaseError, InputError, PolicyEngineError
from supportgate.http_errors import input_status
from supportgate.logging import get_logger
from supportgate.package_data import CONSOLE_PACKAGE, package_directory
from supportgate.tlog import NodeStoreError, TlogInputError

from .pages import menu
from .session import CONSOLE_PATH, CSRF_FIELD, csrf_cookies, csrf_token

log = get_logger(__name__)
STATIC = package_directory(CONSOLE_PACKAGE, "static")


# Times are shown truncated to the second (never later than the time recorded), in UTC;
# static/console.js rewrites a `<time>` into the viewer's zone (docs/console.md).


def utc_text(moment: datetime) -> str:
    """`2026-11-30 12:00:05 UTC`, where no `<time>` can go (an `<option>`, an SVG title)."""
    return f"{_utc(moment):%Y-%m-%d %H:%M:%S} UTC"


def time_element(moment: datetime | None) -> Markup:
    if moment is None:
        return Markup("—")
    text = utc_text(moment)
    iso = f"{_utc(moment):%Y-%m-%dT%H:%M:%S}Z"
    return Markup('<time datetime="{}" title="{}">{}</time>').format(iso, escape(text), text)


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("a time shown must carry a time zone")
    return moment.astimezone(UTC).replace(microsecond=0)


def template_config() -> TemplateConfig[JinjaTemplateEngine]:
    environment = Environment(
        loader=PackageLoader(CONSOLE_PACKAGE, "templates"),
        autoescape=True,  # every value is escaped unless a template says otherwise (none does)
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["time"] = time_element  # the viewer's zone, by static/console.js
    environment.filters["utc"] = lambda moment: "—" if moment is None else utc_text(moment)
    environment.globals["ui"] = CONSOLE_PATH
    environment.globals["quote"] = lambda text: quote(str(text), safe="")
    environment.globals["csrf_field"] = CSRF_FIELD
    return TemplateConfig(engine=JinjaTemplateEngine.from_environment(environment))


def render(
    request: Request[Any, Any, Any], name: str, *, status_code: int = 200, **context: Any
) -> Template:
    principal = request.state.get(PRINCIPAL_STATE_KEY)
    return Template(
        template_name=name,
        context={
            **context,
            "csrf_token": csrf_token(request),
            "principal": principal,
            "menu": menu(principal),
            "path": request.url.path,
        },
        status_code=status_code,
        cookies=csrf_cookies(request),
    )


def error_page(request: Request[Any, Any, Any], status_code: int, detail: str) -> Template:
    return render(
        request, "error.html.j2", status_code=status_code, status=status_code, detail=detail
    )


def _login_redirect(request: Request[Any, Any, Any], _: NotAuthorizedException) -> Response[Any]:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return Redirect(
        f"{CONSOLE_PATH}/login?{urlencode({'next': target})}", status_code=HTTP_303_SEE_OTHER
    )


def _http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    page = error_page(request, exc.status_code, str(exc.detail))
    page.headers.update(exc.headers or {})  # a 429's Retry-After
    return page


def _input_error(
    request: Request[Any, Any, Any], exc: InputError | TlogInputError
) -> Response[Any]:
    return error_page(request, input_status(exc), str(exc))


def _unavailable(
    request: Request[Any, Any, Any],
    exc: PolicyEngineError | DatabaseError | NodeStoreError | DBAPIError,
) -> Response[Any]:
    what = "policy engine" if isinstance(exc, PolicyEngineError) else "database"
    log.error("dependency_unavailable", dependency=what, error=str(exc).splitlines()[0])
    page = error_page(request, 503, f"the {what} cannot answer right now; try again shortly")
    page.headers["Retry-After"] = "5"
    return page


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    NotAuthorizedException: _login_redirect,
    HTTPException: _http_error,
    InputError: _input_error,
    TlogInputError: _input_error,
    PolicyEngineError: _unavailable,
    DatabaseError: _unavailable,
    NodeStoreError: _unavailable,
    DBAPIError: _unavailable,
}
