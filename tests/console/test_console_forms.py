"""Console forms are small: an anonymous 150,000-field form posted to /ui/login is a 413 that
no parser saw (it held the event loop for half a second), urlencoded or multipart; a login
form of the usual size still works."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.connection import request as litestar_request

from supportgate.console.app import MAX_FORM_FIELDS
from supportgate.console.session import CSRF_FIELD

from ..api import Api
from .support import csrf, login

CROWDED = 150_000


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the urlencoded bodies Litestar parsed."""
    sizes: list[int] = []
    parse = litestar_request.parse_url_encoded_form_data  # type: ignore[attr-defined]

    def counting(encoded: bytes) -> Any:
        sizes.append(len(encoded))
        return parse(encoded)

    monkeypatch.setattr(litestar_request, "parse_url_encoded_form_data", counting)
    return sizes


def test_a_crowded_login_form_is_a_413_before_any_parsing(
    sqlite_api: Api, parsed: list[int]
) -> None:
    token = csrf(sqlite_api)
    body = "&".join(["a=1"] * CROWDED) + f"&{CSRF_FIELD}={token}"  # 600 kB: under 1 MiB
    response = sqlite_api.client.post(
        "/ui/login",
        content=body,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 413, response.text
    assert f"at most {MAX_FORM_FIELDS}" in response.text
    assert parsed == []
    assert login(sqlite_api)  # the usual form still logs in (and is parsed)
    assert parsed


def test_a_crowded_multipart_login_form_is_refused(sqlite_api: Api) -> None:
    token = csrf(sqlite_api)
    fields = {f"f{number}": "1" for number in range(MAX_FORM_FIELDS + 1)}
    response = sqlite_api.client.post(
        "/ui/login",
        files={name: (None, value) for name, value in fields.items()},
        data={CSRF_FIELD: token},
    )
    assert response.status_code in {400, 413}, response.text
