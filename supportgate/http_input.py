"""A check every request's parameters pass before its handler runs (a `before_request` hook).

PostgreSQL refuses text holding a NUL character (the driver raises DataError, which would be
a 503): a path or query parameter with one (`?owner=%00`) is bad input, a 400 naming it.
Bodies are checked where they are decoded (supportgate.manifests).
"""

from __future__ import annotations

from typing import Any

from litestar import Request

from supportgate.errors import UsageError


async def refuse_nul_characters(request: Request[Any, Any, Any]) -> None:
    parameters = [*request.path_params.items(), *request.query_params.multi_items()]
    for name, value in parameters:
        if isinstance(value, str) and "\x00" in value:
            raise UsageError(f"{name}: NUL characters (%00) are not accepted")
