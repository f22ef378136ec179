"""Idempotency-Key against real `supportgate serve` processes: 20 clients post the same key and
body at once (to one server, then spread over two servers on one database, where the race is
settled by the database): every client gets the same 201, and one decision is recorded."""

from __future__ import annotations

import asyncio
import json
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from supportgate.db import create_db_engine

from ..api_support import hardware
from ..server import clean_env, make_keys, serving

CLIENTS = 20


def _counts(database_url: str) -> tuple[int, int, int]:
    engine = create_db_engine(database_url)
    try:
        with engine.connect() as connection:
            return tuple(  # type: ignore[return-value]
                int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())  # noqa: S608 - fixed names
                for table in ("decisions", "manifests", "idempotency_keys")
            )
    finally:
        engine.dispose()


async def _post_at_once(urls: list[str], key: str, body: bytes) -> list[httpx.Response]:
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Idempotency-Key": "deploy-42",
    }
    limits = httpx.Limits(max_connections=CLIENTS)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        start = asyncio.Event()

        async def one(index: int) -> httpx.Response:
            await start.wait()
            url = urls[index % len(urls)]
            return await client.post(f"{url}/v1/evaluations", content=body, headers=headers)

        tasks = [asyncio.create_task(one(index)) for index in range(CLIENTS)]
        await asyncio.sleep(0.05)
        start.set()
        return list(await asyncio.gather(*tasks))


@pytest.mark.parametrize("servers", [1, 2])
def test_concurrent_repeats_get_one_answer_and_one_decision(
    db_url: str, tmp_path: Path, servers: int
) -> None:
    keys = make_keys(db_url)
    env = clean_env(SUPPORTGATE_DATABASE_URL=db_url)
    body = json.dumps(hardware("pool-a")).encode()
    with ExitStack() as stack:
        urls = [
            stack.enter_context(serving(tmp_path / f"server-{index}", env=env)).url
            for index in range(servers)
        ]
        answers = asyncio.run(_post_at_once(urls, keys["ci"], body))
        assert [a.status_code for a in answers] == [201] * CLIENTS, answers[0].text
        assert len({a.content for a in answers}) == 1
        assert json.loads(answers[0].content)["manifest"]["name"] == "pool-a"
        assert _counts(db_url) == (1, 1, 1)

        # Later repeats, to either server, still replay that answer.
        for url in urls:
            again = httpx.post(
                f"{url}/v1/evaluations",
                content=body,
                headers={
                    "Authorization": f"Bearer {keys['ci']}",
                    "Content-Type": "application/json",
                    "Idempotency-Key": "deploy-42",
                },
                timeout=30,
            )
            assert again.content == answers[0].content
    assert _counts(db_url) == (1, 1, 1)
