"""WaiverService's memory, on SQLite and PostgreSQL: the active waivers are read once and then
answered from memory until this process changes one or the reload interval passes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, event

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.db import session_factory
from supportgate.events import Events, WaiverChanged
from supportgate.ledger.writer import LedgerWriter
from supportgate.policy.bundle import PolicyBundle
from supportgate.policy.inputs import format_time
from supportgate.waivers.services import RELOAD_SECONDS, WaiverService, deny_rule_ids
from supportgate.waivers.views import WaiverRequest

from ..clock import FakeClock

KEY = ("DeploymentManifest", "v41-flash-h100-prod")


def waiver_reads(engine: Engine) -> list[str]:
    """A list that collects every statement on the waivers table from now on."""
    seen: list[str] = []

    def record(*args: Any) -> None:
        if "waivers" in str(args[2]):
            seen.append(str(args[2]))

    event.listen(engine, "before_cursor_execute", record)
    return seen


def service(engine: Engine, events: Events, **options: Any) -> WaiverService:
    sessions = session_factory(engine)
    bundle = PolicyBundle.load(DEFAULT_POLICY_DIR)
    return WaiverService(
        sessions,
        ledger=LedgerWriter(sessions, events=events),
        deny_rules=deny_rule_ids(bundle.modules),
        **options,
    )


def request(**changes: Any) -> WaiverRequest:
    fields: dict[str, Any] = {
        "rule": "port.production",
        "kind": KEY[0],
        "name": KEY[1],
        "justification": "pilot",
        "expires_at": datetime.now(UTC) + timedelta(days=1),
    }
    fields.update(changes)
    return WaiverRequest(**fields)


def test_active_waivers_come_from_memory_until_a_change_or_the_interval(
    migrated_db: Engine,
) -> None:
    clock = FakeClock()
    events = Events()
    heard: list[WaiverChanged] = []
    events.on(WaiverChanged, heard.append)
    waivers = service(migrated_db, events, clock=clock)
    now = datetime.now(UTC)

    reads = waiver_reads(migrated_db)
    assert waivers.active_for(*KEY, now) == []  # first use: one read
    assert len(reads) == 1
    for _ in range(5):
        assert waivers.active_for(*KEY, now) == []
    assert len(reads) == 1

    made = waivers.create(request(), created_by="admin")  # reloads at once
    assert [(c.waiver_id, c.action, c.affects_tracked) for c in heard] == [
        (made.id, "created", False)
    ]
    assert heard[0].trigger == f"waiver:{made.id}:created"
    reads.clear()
    expected = [
        {"id": made.id, "rule": "port.production", "expires_at": format_time(made.expires_at)}
    ]
    for _ in range(5):
        assert waivers.active_for(*KEY, now) == expected
    assert reads == []
    assert waivers.cache_is_fresh()

    clock.advance(RELOAD_SECONDS + 1)  # another replica may have changed them: read again
    assert not waivers.cache_is_fresh()
    assert waivers.active_for(*KEY, now) == expected
    assert len(reads) == 1

    deleted = waivers.delete(made.id, deleted_by="admin")
    assert deleted is not None
    assert deleted.deleted_by == "admin"
    assert heard[-1].action == "deleted"
    assert waivers.active_for(*KEY, now) == []
    assert waivers.delete(made.id, deleted_by="admin") is None


def test_a_failing_handler_does_not_undo_the_waiver(migrated_db: Engine) -> None:
    events = Events()
    heard: list[WaiverChanged] = []

    def broken(_change: WaiverChanged) -> None:
        raise RuntimeError("sweeps unavailable")

    events.on(WaiverChanged, broken)
    events.on(WaiverChanged, heard.append)  # the handlers after a failing one still run
    waivers = service(migrated_db, events)
    made = waivers.create(request(), created_by="admin")
    assert [w["id"] for w in waivers.active_for(*KEY, datetime.now(UTC))] == [made.id]
    assert [change.waiver_id for change in heard] == [made.id]
