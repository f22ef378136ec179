"""How large a console form may be: at most MAX_FORM_FIELDS fields (bytes: the console's
`request_max_body_size`).

Litestar parses an urlencoded form whole with `parse_qsl`, however many fields it has: a
150,000-field form posted to /ui/login, before any login, held the event loop for about half
a second. The console's forms have a handful of fields, so a body with more is refused with
a 413 before anything parses it (counting its `&` separators is a scan of the bytes, in C).
Multipart forms are held to the same count by Litestar's `multipart_form_part_limit`.
"""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.enums import RequestEncodingType
from litestar.exceptions import HTTPException
from litestar.status_codes import HTTP_413_REQUEST_ENTITY_TOO_LARGE

MAX_FORM_FIELDS = 64


async def refuse_crowded_forms(request: Request[Any, Any, Any]) -> None:
    """A 413 for an urlencoded body of more than MAX_FORM_FIELDS fields (a before_request
    hook, ahead of the CSRF check, which parses the form)."""
    if request.content_type[0] != RequestEncodingType.URL_ENCODED:
        return
    fields = (await request.body()).count(b"&") + 1
    if fields > MAX_FORM_FIELDS:
        raise HTTPException(
            status_code=HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            detail=f"the form has {fields} fields; the console's forms have at most "
            f"{MAX_FORM_FIELDS}",
        )
