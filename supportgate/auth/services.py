"""Creating keys and authenticating requests by key."""

from __future__ import annotations

import re
import threading

from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import transaction
from supportgate.errors import UsageError

from .keys import display_prefix, generate_key, hash_key
from .repository import any_key, find_active_by_hash, find_active_by_id, insert_key
from .roles import ROLES, Principal, Role

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
CACHE_SECONDS = 10.0


class KeyService:
    """Creates keys, and resolves a presented key to a Principal.

    Successful lookups are cached for a few seconds so that a burst of CI requests costs one
    database read, not one each; unknown keys are never cached.
    """

    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._sessions = sessions
        self._clock = clock
        self._cache: dict[str, tuple[float, Principal]] = {}
        self._rereading: set[str] = set()  # digests whose expired entry one caller re-reads
        self._lock = threading.Lock()

    def create_key(self, *, name: str, role: str) -> str:
        """A new key for `name` with `role`; returns the secret, which is not stored."""
        if role not in ROLES:
            raise UsageError(f"must be one of {', '.join(ROLES)}, got {role!r}", field="role")
        if not _NAME.match(name):
            raise UsageError(
                f"{name!r} must be 1-64 letters, digits, '.', '_' or '-'", field="name"
            )
        secret = generate_key()
        with transaction(self._sessions, write=True) as session:
            insert_key(
                session,
                name=name,
                role=role,  # checked against ROLES above
                key_hash=hash_key(secret),
                prefix=display_prefix(secret),
                now=self._clock.now(),
            )
        return secret

    def bootstrap_admin(self) -> str | None:
        """A first admin key named `admin` when no key exists at all; None otherwise."""
        with transaction(self._sessions) as session:
            if any_key(session):
                return None
        return self.create_key(name="admin", role="admin")

    def cached(self, secret: str) -> Principal | None:
        """The principal for a key seen in the last few seconds, without touching the database.

        When the entry has just expired, one caller (None here) reads the key again; the
        others keep the entry until that read ends, so a busy key costs one query per
        CACHE_SECONDS, not one per request in flight."""
        digest = hash_key(secret)
        with self._lock:
            cached = self._cache.get(digest)
            if cached is None:
                return None
            if cached[0] > self._clock.monotonic() or digest in self._rereading:
                return cached[1]
            self._rereading.add(digest)
            return None

    def authenticate(self, secret: str) -> Principal | None:
        """The key's principal, from the cache or the database; None for an unknown key."""
        digest = hash_key(secret)
        now = self._clock.monotonic()
        with self._lock:
            fresh = self._cache.get(digest)
        if fresh is not None and fresh[0] > now:
            return fresh[1]
        try:
            with transaction(self._sessions) as session:
                row = find_active_by_hash(session, digest)
                principal = (
                    Principal(key_id=int(row.id or 0), name=row.name, role=_role(row.role))
                    if row is not None
                    else None
                )
        finally:
            with self._lock:
                self._rereading.discard(digest)
        with self._lock:
            if principal is None:
                self._cache.pop(digest, None)  # revoked: no longer answered from memory
            else:
                self._cache[digest] = (now + CACHE_SECONDS, principal)
        return principal

    def principal_by_id(self, key_id: int) -> Principal | None:
        """The principal of the key with this id while it may act (not revoked), read from the
        database on every call, never the cache; None once it may not. A console session asks
        on each request (supportgate/console/logins.py), so it ends the moment its key does."""
        with transaction(self._sessions) as session:
            row = find_active_by_id(session, key_id)
            if row is None:
                return None
            return Principal(key_id=int(row.id or 0), name=row.name, role=_role(row.role))


def _role(value: str) -> Role:
    if value not in ROLES:
        raise UsageError(f"stored API key has an unknown role {value!r}", field=None)
    return value
