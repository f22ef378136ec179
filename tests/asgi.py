"""An app called as a server calls it, for tests and benches that drive the ASGI app directly."""

from __future__ import annotations

from typing import Any


def post_scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """The scope an HTTP/1.1 server hands the app for a POST to `path` with `headers`."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 80),
        "state": {},
    }
