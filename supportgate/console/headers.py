"""The security headers of every console response (pages, errors, redirects, static files).

- `Content-Security-Policy`: nothing but the console's own stylesheet, script and forms. The
  one script is a static file (`static/console.js`, which shows times in the viewer's zone);
  nothing inline runs (no inline `<script>`, no `on...=` attributes, no `style=` attributes;
  tests/browser checks that Chromium reports no violation on any page), nothing loads from
  elsewhere, forms post only to the console, and `frame-ancestors 'none'` keeps every page
  out of every frame (clickjacking), even of a page on the same site.
- `X-Frame-Options: DENY`: the same refusal for browsers older than frame-ancestors.
- `X-Content-Type-Options: nosniff`: a response is only ever what its Content-Type says.
- `Referrer-Policy: same-origin`: a link out of the console never carries its URL (filters,
  manifest names) to another site.

Hand-written rather than a library: four constant headers on one ASGI app need no more.
"""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    )
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
)


def with_security_headers(app: ASGIApp) -> ASGIApp:
    """`app` with SECURITY_HEADERS added to every HTTP response it starts."""

    async def secured(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *SECURITY_HEADERS]
            await send(message)

        await app(scope, receive, send_secured)

    return secured
