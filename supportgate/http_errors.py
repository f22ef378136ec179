"""The one place where supportgate's errors become HTTP responses.

Bodies are JSON `{"status_code": ..., "detail": ..., "field": ...}`; `field` is the JSON path
(or parameter name) of the input at fault, when there is one. Nothing a client sends may
produce a 5xx: input errors are 4xx, and only the engine or the database being unable to
serve gives 503.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException, InternalServerException
from litestar.types import ExceptionHandlersMap, Scope
from sqlalchemy.exc import DBAPIError

from supportgate.errors import (
    ConflictError,
    DatabaseError,
    InputError,
    ManifestError,
    PolicyEngineError,
    SupportgateError,
    UnsupportedMediaType,
)
from supportgate.evaluations.tracking import NotTracked
from supportgate.logging import get_logger
from supportgate.manifests import DocumentTooLargeError

log = get_logger(__name__)
HTTP_500 = 500

_INPUT_STATUS: tuple[tuple[type[InputError], int], ...] = (
    (DocumentTooLargeError, 413),
    (NotTracked, 404),
    (ConflictError, 409),
    (UnsupportedMediaType, 415),
)


def input_status(exc: InputError) -> int:
    return next((status for kind, status in _INPUT_STATUS if isinstance(exc, kind)), 400)


def _body(status: int, detail: str, field: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"status_code": status, "detail": detail}
    if field is not None:
        body["field"] = field
    return body


def handle_input_error(
    request: Request[Any, Any, Any], exc: InputError
) -> Response[dict[str, Any]]:
    del request
    status = input_status(exc)
    if isinstance(exc, ManifestError):
        return Response(_body(status, exc.describe(), exc.path), status_code=status)
    prefix = str(exc).partition(":")[0]
    named = prefix if prefix and " " not in prefix else None
    return Response(_body(status, str(exc), named), status_code=status)


def handle_unavailable(
    _: Request[Any, Any, Any], exc: PolicyEngineError | DatabaseError | DBAPIError
) -> Response[dict[str, Any]]:
    what = "policy engine" if isinstance(exc, PolicyEngineError) else "database"
    log.error("dependency_unavailable", dependency=what, error=str(exc).splitlines()[0])
    return Response(
        _body(503, f"the {what} cannot answer right now; no decision was made or recorded"),
        status_code=503,
        headers={"Retry-After": "5"},
    )


async def log_unexpected(exc: Exception, scope: Scope) -> None:
    """Log, with its traceback, an error that becomes a 500 (an `after_exception` hook): the
    errors above are answered on purpose and say enough in the request event."""
    answered = isinstance(exc, SupportgateError | DBAPIError) or (
        isinstance(exc, HTTPException) and exc.status_code < HTTP_500
    )
    if _client_went_away(exc):
        log.info("client_disconnected", path=scope.get("path"))
    elif not answered:
        log.error("unexpected_error", path=scope.get("path"), exc_info=exc)


def _client_went_away(exc: Exception) -> bool:
    """Litestar's answer to a client that hung up while sending its body (a load generator
    stopping, a CI job cancelled): nothing failed here, and a traceback per disconnect would
    only cost the service time."""
    return isinstance(exc, InternalServerException) and exc.detail == CLIENT_DISCONNECTED


CLIENT_DISCONNECTED = "client disconnected prematurely"


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    InputError: handle_input_error,
    PolicyEngineError: handle_unavailable,
    DatabaseError: handle_unavailable,
    DBAPIError: handle_unavailable,
}
