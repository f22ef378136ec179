"""API key secrets: `sg_` + 43 url-safe characters (32 random bytes), shown once, stored only
as a sha256 hash. With that much entropy an unsalted hash is enough to make the stored one
useless to an attacker, and it keeps lookup a single indexed equality.
"""

from __future__ import annotations

import hashlib
import secrets

KEY_PREFIX = "sg_"
_SHOWN_PREFIX_LENGTH = 8


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def display_prefix(secret: str) -> str:
    return secret[:_SHOWN_PREFIX_LENGTH]
