"""Roles and the principal a request acts as."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Role = Literal["ci", "procurement", "admin"]
ROLES: tuple[Role, ...] = get_args(Role)
_RANK: dict[str, int] = {role: rank for rank, role in enumerate(ROLES)}


def role_allows(have: str, need: Role) -> bool:
    """Each role has what the roles before it have."""
    return _RANK.get(have, -1) >= _RANK[need]


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling (never the key itself); `owners` empty: every owner."""

    key_id: int
    name: str
    role: Role
    owners: tuple[str, ...] = ()

    def acts_for(self, owner: str | None) -> bool:
        return not self.owners or owner in self.owners
