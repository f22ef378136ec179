"""A JSON body that Litestar gives a handler as `data` is decoded once, by
supportgate.http_input.check_json_body under the manifests' rules, and the handler gets that
decoding (Litestar's own decoder is not run on it)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.serialization import decode_json

from ..api import Api


def test_a_data_body_is_decoded_once_and_the_handler_gets_that_decoding(
    sqlite_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded: list[bytes] = []

    def counted(value: bytes, **kwargs: Any) -> Any:
        decoded.append(value)
        return decode_json(value, **kwargs)

    # Request.json's decoder, as litestar.connection.request imported it
    monkeypatch.setattr("litestar.connection.request.decode_json", counted)
    response = sqlite_api.client.post(
        "/v1/keys",
        json={"name": "team-b-ci", "role": "ci", "owners": ["infra", "gpu"]},
        headers=sqlite_api.headers("admin"),
    )
    assert response.status_code == 201, response.text
    assert (response.json()["name"], response.json()["owners"]) == ("team-b-ci", ["gpu", "infra"])
    assert decoded == []
