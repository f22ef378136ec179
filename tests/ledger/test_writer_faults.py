"""The ledger's writer through faults, on SQLite and PostgreSQL: ENOSPC injected at the write
(where a full file system cannot be mounted; tests/serving/test_full_disk.py mounts one),
a log that cannot be written, a writer that is down. Every waiting request is answered (503
naming the cause), the writer goes on with the next group, readiness says what is wrong, and
nothing committed is lost. Also the readiness canary of the policy engine, cached on the
service's clock."""

from __future__ import annotations

import errno
from typing import Any

import psycopg
import pytest

from supportgate.audit.verify import verify_log
from supportgate.db.engine import database_url
from supportgate.errors import PolicyEvaluationError
from supportgate.ledger import writer as ledger_writer
from supportgate.ledger.batches import Batch, DecisionWrite
from supportgate.ledger.writer import FAILURE_HOLD_S, LedgerWriteFailed
from supportgate.observability.health import CANARY_SECONDS

from ..api import Api, running_api
from ..api_support import hardware, post
from ..clock import FakeClock
from ..db.test_database_limits import _driver_url
from ..services import temporary_database
from .test_writer import _record

NO_SPACE = OSError(errno.ENOSPC, "No space left on device")
ANSWER_LIMIT_S = 60.0  # a safety net against a hang, not a timing expectation


def _fail_every_write(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_space(*_args: Any) -> Any:
        raise NO_SPACE

    monkeypatch.setattr(ledger_writer, "apply_batch", no_space)


def _ready(api: Api) -> tuple[int, dict[str, str]]:
    response = api.client.get("/health/ready")
    return response.status_code, response.json()["checks"]


def _intact(api: Api) -> bool:
    runtime = api.runtime
    runtime.checkpointer.after_sweep()  # sign what was written, as the service soon would
    result = verify_log(
        runtime.sessions, verifier=runtime.checkpointer.verifier(), clock=runtime.clock
    )
    assert result.intact, result
    return True


def test_enospc_at_the_write_answers_every_request_and_the_writer_goes_on(
    clocked_api: Api, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = clocked_api
    assert post(api, hardware("before")).status_code == 201
    _fail_every_write(monkeypatch)

    refused = post(api, hardware("during"))
    assert refused.status_code == 503, refused.text
    assert "No space left on device" in refused.json()["detail"]
    futures = [
        api.runtime.ledger.submit(Batch(decisions=[_write(api, f"pool-{n}")])) for n in range(5)
    ]
    for future in futures:
        assert isinstance(future.exception(timeout=ANSWER_LIMIT_S), LedgerWriteFailed)
    status, checks = _ready(api)
    assert status == 503
    assert "No space left on device" in checks["ledger"]
    assert checks["database"] == "ok"

    monkeypatch.undo()  # space comes back
    assert _ready(api)[0] == 503  # held: a small write may pass where a decision's fails
    clock.advance(FAILURE_HOLD_S)
    assert _ready(api) == (200, {"database": "ok", "ledger": "ok", "policy_engine": "ok"})
    assert post(api, hardware("after")).status_code == 201
    assert _intact(api)


def test_a_successful_write_makes_the_writer_ready_at_once(
    clocked_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = clocked_api
    _fail_every_write(monkeypatch)
    assert post(api, hardware("during")).status_code == 503
    monkeypatch.undo()
    assert post(api, hardware("after")).status_code == 201
    assert _ready(api)[0] == 200


def test_a_log_that_cannot_be_written_still_answers(
    clocked_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service's log on the full disk: the writer's own log line about the failed write
    raised, the writer thread died with the group unanswered, and every later POST hung."""

    class FullDiskLog:
        def __getattr__(self, _name: str) -> Any:
            def write(*_args: Any, **_kwargs: Any) -> None:
                raise NO_SPACE

            return write

    api = clocked_api
    _fail_every_write(monkeypatch)
    monkeypatch.setattr(ledger_writer, "log", FullDiskLog())
    future = api.runtime.ledger.submit(Batch(decisions=[_write(api, "pool-a")]))
    assert isinstance(future.exception(timeout=ANSWER_LIMIT_S), LedgerWriteFailed)
    again = api.runtime.ledger.submit(
        Batch(decisions=[_write(api, "pool-b")])
    )  # the writer goes on
    assert isinstance(again.exception(timeout=ANSWER_LIMIT_S), LedgerWriteFailed)
    monkeypatch.undo()
    assert post(api, hardware("after")).status_code == 201
    assert _intact(api)


def test_enospc_in_the_callers_thread_is_503_naming_it(
    clocked_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A waiver's batch, written alone (LedgerWriter.write), fails as a decision's does."""
    api = clocked_api
    assert post(api, hardware("pool-a")).status_code == 201
    _fail_every_write(monkeypatch)
    response = api.client.post(
        "/v1/waivers",
        json={
            "rule": "port.production",
            "kind": "HardwareManifest",
            "name": "pool-a",
            "justification": "a pilot",
            "expires_at": "2099-01-01T00:00:00Z",
        },
        headers=api.headers("admin"),
    )
    assert response.status_code == 503, response.text
    assert "No space left on device" in response.json()["detail"]
    assert "No space left on device" in _ready(api)[1]["ledger"]


def test_a_writer_that_is_down_is_503_and_not_ready(clocked_api: Api) -> None:
    api = clocked_api
    api.runtime.ledger.stop()
    refused = post(api, hardware("pool-a"))
    assert refused.status_code == 503, refused.text
    assert "not running" in refused.json()["detail"]
    status, checks = _ready(api)
    assert status == 503
    assert "not running" in checks["ledger"]
    api.runtime.ledger.start()
    assert post(api, hardware("pool-a")).status_code == 201
    assert _ready(api)[0] == 200


def test_a_failing_canary_evaluation_is_not_ready_for_a_while(
    clocked_api: Api, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine answers its health check but cannot evaluate (a bundle that breaks every
    evaluation): readiness says so, from a canary kept CANARY_SECONDS on the clock."""
    api = clocked_api
    assert _ready(api)[0] == 200
    clock.advance(CANARY_SECONDS)

    def broken(*_args: Any) -> Any:
        raise PolicyEvaluationError("the policy answered no decision document")

    monkeypatch.setattr(api.runtime.engine, "evaluate", broken)
    status, checks = _ready(api)
    assert status == 503
    assert checks["policy_engine"] == "the policy answered no decision document"
    monkeypatch.undo()
    assert _ready(api)[0] == 503  # the canary's answer is kept
    clock.advance(CANARY_SECONDS)
    assert _ready(api)[0] == 200


def _write(api: Api, name: str) -> DecisionWrite:
    return _record(api, name)


@pytest.mark.postgres
def test_a_read_only_postgres_is_503_and_not_ready_until_it_takes_writes(
    postgres_url: str, postgres_template: str
) -> None:
    """The database refuses writes (a read-only server, as a replica promoted the wrong way
    round would be): 503 naming it and not ready; writable again: ready after the hold (by
    the probe write) with nothing lost."""
    clock = FakeClock()
    with (
        temporary_database(postgres_url, template=postgres_template) as url,
        running_api(url, clock=clock) as api,
        psycopg.connect(_driver_url(url), autocommit=True) as admin,
    ):
        name = database_url(url).database
        assert post(api, hardware("before")).status_code == 201
        admin.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
        api.runtime.db.dispose()  # new connections take the setting
        refused = post(api, hardware("during"))
        assert refused.status_code == 503, refused.text
        assert "read-only transaction" in refused.json()["detail"]
        clock.advance(FAILURE_HOLD_S)
        status, checks = _ready(api)
        assert status == 503
        assert "read-only transaction" in checks["ledger"]  # the probe is refused too

        admin.execute(f'ALTER DATABASE "{name}" RESET default_transaction_read_only')
        api.runtime.db.dispose()
        assert _ready(api)[0] == 200
        assert post(api, hardware("after")).status_code == 201
        assert _intact(api)
