"""Console sessions, kept server-side: the one writer of the console_sessions table (what it
keeps, how a session ends, why `last_seen_at` is written only now and then: docs/console.md)."""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta

from sqlalchemy import delete, insert, or_, select, update
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.auth.keys import hash_key
from supportgate.auth.roles import Principal
from supportgate.auth.services import KeyService
from supportgate.clock import Clock
from supportgate.db import ConsoleSession, table_of, transaction
from supportgate.threads import thread_twin

_ID = re.compile(r"^[A-Za-z0-9_-]{43}$")
_TABLE = table_of(ConsoleSession)
MAX_TOUCH_INTERVAL = timedelta(minutes=1)


class ConsoleSessions:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        keys: KeyService,
        clock: Clock,
        idle_timeout: float,
        session_timeout: float,
    ) -> None:
        self._sessions = sessions
        self._keys = keys
        self._clock = clock
        self._idle = timedelta(seconds=idle_timeout)
        self._lifetime = timedelta(seconds=session_timeout)
        self._touch_interval = min(self._idle / 10, MAX_TOUCH_INTERVAL)

    @property
    def cookie_seconds(self) -> int:
        """How long the browser keeps the cookie: the absolute timeout (the server decides)."""
        return max(1, int(self._lifetime.total_seconds()))

    def begin(self, principal: Principal) -> str:
        """A new session acting as `principal`'s key; the id for its cookie (not stored)."""
        session_id = secrets.token_urlsafe(32)
        now = self._clock.now()
        with transaction(self._sessions, write=True) as session:
            # The ended sessions of everyone go here, so the table holds only live ones
            # without a sweeper of its own.
            session.execute(
                delete(_TABLE).where(
                    or_(
                        _TABLE.c.last_seen_at <= now - self._idle,
                        _TABLE.c.created_at <= now - self._lifetime,
                    )
                )
            )
            session.execute(
                insert(_TABLE).values(
                    id_hash=hash_key(session_id),
                    api_key_id=principal.key_id,
                    created_at=now,
                    last_seen_at=now,
                )
            )
        return session_id

    begin_in_thread = thread_twin(begin)

    def principal(self, session_id: str) -> Principal | None:
        """None when there is no such session or it has ended (its row then goes)."""
        if not _ID.match(session_id):
            return None
        digest = hash_key(session_id)
        with transaction(self._sessions) as session:
            found = session.execute(
                select(_TABLE.c.api_key_id, _TABLE.c.created_at, _TABLE.c.last_seen_at).where(
                    _TABLE.c.id_hash == digest
                )
            ).first()
        if found is None:
            return None
        key_id, created_at, last_seen_at = found
        now = self._clock.now()
        ended = now - last_seen_at >= self._idle or now - created_at >= self._lifetime
        principal = None if ended else self._keys.principal_by_id(key_id)
        if principal is None:
            self._delete(digest)
        elif now - last_seen_at >= self._touch_interval:
            self._touch(digest, now)
        return principal

    principal_in_thread = thread_twin(principal)

    def end(self, session_id: str | None) -> None:
        if session_id and _ID.match(session_id):
            self._delete(hash_key(session_id))

    end_in_thread = thread_twin(end)

    def _delete(self, digest: str) -> None:
        with transaction(self._sessions, write=True) as session:
            session.execute(delete(_TABLE).where(_TABLE.c.id_hash == digest))

    def _touch(self, digest: str, now: datetime) -> None:
        with transaction(self._sessions, write=True) as session:
            session.execute(
                update(_TABLE)
                .where(_TABLE.c.id_hash == digest, _TABLE.c.last_seen_at < now)
                .values(last_seen_at=now)
            )
