"""Body limits through a real `supportgate serve` (uvicorn): the 1 MiB limit holds for a body
sent with Content-Length and for one sent chunked, without Content-Length, which the
in-process test client cannot send."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import text

from supportgate.db import create_db_engine

from ..api_support import hardware
from ..server import Served, clean_env, make_keys, serving

MIB = 1024 * 1024
CHUNK = 64 * 1024


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str, str]]:
    """One server on a SQLite file for the module; yields it, its ci key and database URL."""
    workdir = tmp_path_factory.mktemp("served")
    url = f"sqlite:///{workdir / 'supportgate.db'}"
    keys = make_keys(url)
    with serving(workdir, env=clean_env(SUPPORTGATE_DATABASE_URL=url)) as server:
        yield server, keys["ci"], url


def _decisions(url: str) -> int:
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            return int(connection.execute(text("SELECT count(*) FROM decisions")).scalar_one())
    finally:
        engine.dispose()


def _chunks(data: bytes) -> Iterator[bytes]:
    for start in range(0, len(data), CHUNK):
        yield data[start : start + CHUNK]


def _post(server: Served, key: str, content: bytes | Iterator[bytes]) -> httpx.Response:
    return httpx.post(
        f"{server.url}/v1/evaluations",
        content=content,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        timeout=60,
    )


def test_a_chunked_body_within_the_limit_is_read(served: tuple[Served, str, str]) -> None:
    server, key, url = served
    before = _decisions(url)
    document = json.dumps(hardware("chunked")).encode()
    padded = document + b" " * (MIB - len(document))  # exactly 1 MiB, sent in 16 chunks
    response = _post(server, key, _chunks(padded))
    assert response.request.headers.get("transfer-encoding") == "chunked"
    assert "content-length" not in response.request.headers
    assert response.status_code == 201, response.text
    assert _decisions(url) == before + 1


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "content-length"])
def test_a_body_over_1_mib_is_413(served: tuple[Served, str, str], chunked: bool) -> None:
    server, key, url = served
    before = _decisions(url)
    document = json.dumps(hardware("too-big")).encode()
    body = document + b" " * (MIB + 1 - len(document))
    response = _post(server, key, _chunks(body) if chunked else body)
    assert ("content-length" not in response.request.headers) is chunked
    assert response.status_code == 413, response.text
    assert response.json()["status_code"] == 413
    assert _decisions(url) == before
    # The server is still serving.
    assert httpx.get(f"{server.url}/health/live", timeout=10).status_code == 200
