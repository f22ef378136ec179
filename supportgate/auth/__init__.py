"""API keys and roles: `ci` < `procurement` < `admin`; keys are stored as sha256 hashes."""

from __future__ import annotations

from .roles import ROLES, Principal, Role, role_allows

__all__ = ["ROLES", "Principal", "Role", "role_allows"]
