"""The one place where supportgate's errors become HTTP responses: `{status_code, detail,
field}`, and every problem of a document that does not decode (`errors`, CONTRACT 10.8).
Nothing a client sends may produce a 5xx: input errors are 4xx, and only the engine or the
database being unable to serve gives 503.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response
from litestar.exceptions import (
    ClientException,
    HTTPException,
    InternalServerException,
    ValidationException,
)
from litestar.status_codes import HTTP_400_BAD_REQUEST, HTTP_500_INTERNAL_SERVER_ERROR
from litestar.types import ExceptionHandlersMap, Scope
from sqlalchemy.exc import DBAPIError

from supportgate.db.engine import busy_error
from supportgate.errors import (
    ConflictError,
    DatabaseError,
    DocumentTooLargeError,
    Forbidden,
    InputError,
    ManifestError,
    NotFound,
    PolicyEngineError,
    UnsupportedMediaType,
)
from supportgate.logging import get_logger
from supportgate.manifests.decode import with_named_field
from supportgate.tlog import NodeStoreError, TlogInputError

log = get_logger(__name__)

_INPUT_STATUS: tuple[tuple[type[InputError], int], ...] = (
    (DocumentTooLargeError, 413),
    (NotFound, 404),
    (ConflictError, 409),
    (Forbidden, 403),
    (UnsupportedMediaType, 415),
)


def input_status(exc: InputError | TlogInputError) -> int:
    return next((status for kind, status in _INPUT_STATUS if isinstance(exc, kind)), 400)


def _body(status: int, detail: str, field: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"status_code": status, "detail": detail}
    if field is not None:
        body["field"] = field
    return body


def handle_input_error(
    request: Request[Any, Any, Any], exc: InputError | TlogInputError
) -> Response[dict[str, Any]]:
    del request
    status = input_status(exc)
    body = _body(status, exc.describe(), exc.field)
    if isinstance(exc, ManifestError):  # every problem of the document (CONTRACT 10.8)
        body["errors"] = [
            {
                "field": problem.field,
                "message": f"{problem.source}: {problem.message}"
                if problem.source
                else problem.message,
                "line": problem.line,
                "column": problem.column,
            }
            for problem in exc.problems
        ]
    return Response(body, status_code=status)


def handle_validation_error(
    request: Request[Any, Any, Any], exc: ValidationException
) -> Response[dict[str, Any]]:
    """Litestar's own 400: its `extra` is kept, and `field` names the first problem as ours do."""
    del request
    problems = exc.extra if isinstance(exc.extra, list) else []
    first = problems[0] if problems and isinstance(problems[0], dict) else {}
    body = _body(exc.status_code, exc.detail, _validation_field(first) or _missing(exc))
    if exc.extra is not None:
        body["extra"] = exc.extra
    return Response(body, status_code=exc.status_code)


def handle_client_error(
    request: Request[Any, Any, Any], exc: ClientException
) -> Response[dict[str, Any]]:
    """Litestar's other 4xx answers, headers kept (Retry-After). A malformed Host header is
    the one 400 a client can send to every route; any other concerns the whole request."""
    del request
    field = None
    if exc.status_code == HTTP_400_BAD_REQUEST:
        field = "Host" if exc.detail == "Invalid host header" else "$"
    body = _body(exc.status_code, exc.detail, field)
    if exc.extra:
        body["extra"] = exc.extra
    return Response(body, status_code=exc.status_code, headers=exc.headers)


def _missing(exc: ValidationException) -> str | None:
    """The parameter a request left out: Litestar raises its 400 for a missing required
    parameter from the KeyError of the parameter's name, and says it only in its text."""
    cause = exc.__cause__
    return cause.args[0] if isinstance(cause, KeyError) and isinstance(cause.args[0], str) else None


def _validation_field(problem: dict[str, Any]) -> str | None:
    key = problem.get("key")
    if not isinstance(key, str):
        return None
    if problem.get("source") != "body":
        return key
    # Litestar names the body `data`, and a field in it by msgspec's path without its `$.`
    path = "$" if key == "data" else f"$.{key}"
    return with_named_field(path, str(problem.get("message", "")))


def handle_unavailable(
    _: Request[Any, Any, Any], exc: PolicyEngineError | DatabaseError | NodeStoreError | DBAPIError
) -> Response[dict[str, Any]]:
    what = "policy engine" if isinstance(exc, PolicyEngineError) else "database"
    busy = busy_error(exc) if isinstance(exc, DBAPIError) else exc
    log.error("dependency_unavailable", dependency=what, error=str(busy or exc).splitlines()[0])
    if isinstance(exc, PolicyEngineError):
        reason = "the policy engine cannot answer right now"
    elif isinstance(busy, DatabaseError | NodeStoreError):  # its message is the cause
        reason = str(busy)
    else:  # a driver's error: its first line is the cause ("database or disk is full")
        cause = (str(getattr(exc, "orig", "")).strip() or type(exc).__name__).splitlines()[0]
        reason = f"the database cannot answer right now: {cause}"
    return Response(
        _body(503, f"{reason}; no decision was made or recorded"),
        status_code=503,
        headers={"Retry-After": "5"},
    )


async def log_unexpected(exc: Exception, scope: Scope) -> None:
    """An `after_exception` hook: the traceback of an error no handler below answers (one
    meant to be caught where raised); the answered ones say enough in the request event."""
    answered = isinstance(
        exc, tuple(kind for kind in EXCEPTION_HANDLERS if isinstance(kind, type))
    ) or (isinstance(exc, HTTPException) and exc.status_code < HTTP_500_INTERNAL_SERVER_ERROR)
    # A client that hung up while sending its body (a load generator stopping, a CI job
    # cancelled): nothing failed here, and a traceback per disconnect would only cost time.
    if isinstance(exc, InternalServerException) and exc.detail == CLIENT_DISCONNECTED:
        log.info("client_disconnected", path=scope.get("path"))
    elif not answered:
        log.error("unexpected_error", path=scope.get("path"), exc_info=exc)


CLIENT_DISCONNECTED = "client disconnected prematurely"  # Litestar's detail for it


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    InputError: handle_input_error,
    TlogInputError: handle_input_error,
    ValidationException: handle_validation_error,
    ClientException: handle_client_error,
    PolicyEngineError: handle_unavailable,
    DatabaseError: handle_unavailable,
    NodeStoreError: handle_unavailable,
    DBAPIError: handle_unavailable,
}
