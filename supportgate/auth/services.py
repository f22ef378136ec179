"""API keys. Requests are answered from a copy in memory of every unrevoked key, read again
when over REFRESH_SECONDS old and a request asks, so a flood of invented keys never reaches
the database; last use is written at most once every LAST_USED_STEP per key (and on stop).
What that means for revocation and expiry: docs/configuration.md, "Keys and roles".
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import cast

import msgspec
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from supportgate.clock import SYSTEM_CLOCK, Clock
from supportgate.db import ApiKey, transaction
from supportgate.errors import NotFound, UsageError
from supportgate.logging import get_logger
from supportgate.threads import thread_twin

from . import repository
from .keys import display_prefix, generate_key, hash_key
from .roles import ROLES, Principal, Role
from .views import DURATION, MAX_OWNERS, NAME, OWNER, CreatedKey, KeyView

log = get_logger(__name__)
_NAME = re.compile(NAME)
_OWNER = re.compile(OWNER)
_DURATION = re.compile(DURATION)
_UNIT = {"d": timedelta(days=1), "h": timedelta(hours=1), "m": timedelta(minutes=1)}
REFRESH_SECONDS = 1.0
LAST_USED_STEP = timedelta(seconds=60)


@dataclass(frozen=True, slots=True)
class _Known:
    principal: Principal
    expires_at: datetime | None


@dataclass(frozen=True, slots=True)
class _Copy:
    by_hash: dict[str, _Known]
    by_id: dict[int, _Known]
    read_at: float


@dataclass(slots=True)
class _Uses:
    """When each key was last used, in memory, and what the table says (key id -> time)."""

    seen: dict[int, datetime] = field(default_factory=dict)
    stored: dict[int, datetime] = field(default_factory=dict)

    def due(self, step: timedelta) -> dict[int, datetime]:
        """A key's first use, then each at least `step` after what the table holds."""
        return {
            key_id: at
            for key_id, at in self.seen.items()
            if key_id not in self.stored
            or (at > self.stored[key_id] and at - self.stored[key_id] >= step)
        }

    def store(self, key_id: int, at: datetime | None) -> None:
        """What the table holds (written here or by another replica): only moves forward."""
        if at is not None and (key_id not in self.stored or at > self.stored[key_id]):
            self.stored[key_id] = at


class KeyService:
    def __init__(self, sessions: sessionmaker[Session], *, clock: Clock = SYSTEM_CLOCK) -> None:
        self._sessions = sessions
        self._clock = clock
        self._copy: _Copy | None = None
        self._uses = _Uses()
        self._refused: set[str] = set()  # the admin keys with owners refused (named in the log)
        self._lock = threading.Lock()  # guards _copy and _uses
        self._reading = threading.Lock()  # one refresh at a time

    def create(
        self,
        *,
        name: str,
        role: str,
        owners: Sequence[str] = (),
        expires_in: str | None = None,
    ) -> CreatedKey:
        """Bad input is a UsageError naming its field as the API's body does (`$.owners`)."""
        checked_role = _check_role(role)
        if not _NAME.match(name):
            raise UsageError(
                f"{name!r} must be 1-64 letters, digits, '.', '_' or '-'", field="$.name"
            )
        checked_owners = _check_owners(owners, checked_role)
        lifetime = None if expires_in is None else _parse_duration(expires_in, field="$.expires_in")
        secret = generate_key()
        now = self._clock.now()
        with transaction(self._sessions, write=True) as session:
            row = ApiKey(
                name=name,
                role=checked_role,
                key_hash=hash_key(secret),
                prefix=display_prefix(secret),
                owners=checked_owners,
                expires_at=None if lifetime is None else now + lifetime,
                created_at=now,
            )
            repository.insert_key(session, row)
            created = CreatedKey(key=secret, **msgspec.structs.asdict(_view(row)))
        self._drop_copy()
        return created

    create_in_thread = thread_twin(create)

    def bootstrap_admin(self) -> str | None:
        with transaction(self._sessions) as session:
            if repository.any_key(session):
                return None
        return self.create(name="admin", role="admin").key

    def list_keys(self) -> list[KeyView]:
        """Every key, revoked ones too, by name; last use as last written (see the doc)."""
        self.flush_last_used()
        with transaction(self._sessions) as session:
            return [_view(row) for row in repository.all_keys(session)]

    list_keys_in_thread = thread_twin(list_keys)

    def revoke(self, name: str) -> KeyView:
        """Revoking it again changes nothing. Refused by this process from its next request."""
        with transaction(self._sessions, write=True) as session:
            row = repository.revoke(session, name, self._clock.now())
            if row is None:
                raise NotFound(f"no API key named {name!r}", field="name")
            view = _view(row)
        self._drop_copy()
        return view

    revoke_in_thread = thread_twin(revoke)

    def fresh(self) -> bool:
        copy = self._copy
        return copy is not None and self._clock.monotonic() - copy.read_at < REFRESH_SECONDS

    def holds(self, secret: str) -> bool:
        """Memory only, never a read, however old (expired keys too): the rate limits' ask."""
        copy = self._copy
        return copy is not None and hash_key(secret) in copy.by_hash

    def authenticate(self, secret: str, *, may_read: bool = True) -> Principal | None:
        """The key's principal; None for an unknown, revoked or expired key. Reads the
        table first when memory is stale, unless `may_read` is False (the event loop's call
        after fresh() said yes: memory gone stale since is still what it was a moment ago)."""
        known = self._current(may_read=may_read).by_hash.get(hash_key(secret))
        return self._admitted(known)

    authenticate_in_thread = thread_twin(authenticate)

    def principal_by_id(self, key_id: int) -> Principal | None:
        """For whoever holds on to a key past one request: a console session ends when this
        says None (revoked or expired). Reads like authenticate."""
        return self._admitted(self._current(may_read=True).by_id.get(key_id))

    def flush_last_used(self, *, everything: bool = False) -> None:
        """`everything`: every use not written yet (the service's stop)."""
        with self._lock:
            due = self._uses.due(timedelta(0) if everything else LAST_USED_STEP)
        self._write_uses(due)

    def _admitted(self, known: _Known | None) -> Principal | None:
        if known is None:
            return None
        now = self._clock.now()
        if known.expires_at is not None and known.expires_at <= now:
            return None
        with self._lock:
            self._uses.seen[known.principal.key_id] = now
        return known.principal

    def _current(self, *, may_read: bool) -> _Copy:
        copy = self._copy
        if copy is not None and (not may_read or self.fresh()):
            return copy
        with self._reading:
            if not self.fresh():  # another caller may have read it while this one waited
                self._refresh()
            assert self._copy is not None  # noqa: S101 - just read
            return self._copy

    def _refresh(self) -> None:
        read_at = self._clock.monotonic()
        by_hash: dict[str, _Known] = {}
        by_id: dict[int, _Known] = {}
        stored: dict[int, datetime | None] = {}
        with transaction(self._sessions) as session:
            for row in repository.unrevoked_keys(session):
                if row.role == "admin" and row.owners:
                    if row.name not in self._refused:  # said once, not at every refresh
                        _refuse_scoped_admin(row)
                        self._refused.add(row.name)
                    continue
                known = _Known(_principal(row), row.expires_at)
                by_hash[row.key_hash] = by_id[known.principal.key_id] = known
                stored[known.principal.key_id] = row.last_used_at
        with self._lock:
            self._copy = _Copy(by_hash=by_hash, by_id=by_id, read_at=read_at)
            for key_id, used in stored.items():
                self._uses.store(key_id, used)
            due = self._uses.due(LAST_USED_STEP)
        self._write_uses(due)

    def _write_uses(self, due: dict[int, datetime]) -> None:
        """Best effort: a use not written (the database busy or away) stays due, and the
        request that happened to refresh is not failed for it."""
        if not due:
            return
        try:
            with transaction(self._sessions, write=True) as session:
                repository.record_last_used(session, due)
        except DBAPIError as exc:
            log.warning("key_last_used_not_written", keys=len(due), error=str(exc.orig))
            return
        with self._lock:
            for key_id, at in due.items():
                self._uses.store(key_id, at)

    def _drop_copy(self) -> None:
        with self._lock:
            if self._copy is not None:
                self._copy = replace(self._copy, read_at=-math.inf)


def _principal(row: ApiKey) -> Principal:
    return Principal(
        key_id=int(row.id or 0),
        name=row.name,
        role=cast(Role, row.role),  # the table's check constraint holds it to ROLES
        owners=tuple(row.owners or ()),
    )


def _refuse_scoped_admin(row: ApiKey) -> None:
    """An admin key with owners is refused, never obeyed: migration 0010 drops owners from
    admin keys and the key service never writes both, so such a row was written around them,
    and neither reading (a scope it cannot keep, or every owner) is what its maker meant."""
    log.warning(
        "admin_key_with_owners_refused",
        key_name=row.name,
        owners=list(row.owners),
        fix=f"revoke it (`supportgate keys revoke {row.name}`) and make a new one",
    )


def _view(row: ApiKey) -> KeyView:
    return msgspec.convert(row, KeyView, from_attributes=True)


def _check_role(role: str) -> Role:
    if role not in ROLES:
        raise UsageError(f"must be one of {', '.join(ROLES)}, got {role!r}", field="$.role")
    return role


def _check_owners(owners: Sequence[str], role: Role) -> list[str]:
    if owners and role == "admin":  # an admin mints keys, untracks and waives for everyone
        raise UsageError(
            "owners belong to ci and procurement keys; an admin key acts for every owner",
            field="$.owners",
        )
    if len(owners) > MAX_OWNERS:
        raise UsageError(f"at most {MAX_OWNERS} owners", field="$.owners")
    for index, owner in enumerate(owners):
        if not _OWNER.match(owner):
            raise UsageError(
                f"an owner is 1-255 characters without control characters, got {owner!r}",
                field=f"$.owners[{index}]",
            )
    return sorted(set(owners))


def _parse_duration(text: str, *, field: str) -> timedelta:
    if not _DURATION.match(text):
        raise UsageError(
            f"{text!r} is not a duration: a whole number from 1 and d, h or m (`90d`, `12h`; "
            "at most 999d, 9999h or 999999m)",
            field=field,
        )
    return int(text[:-1]) * _UNIT[text[-1]]
