"""API key secrets: generated with `secrets`, shown once, stored only as a sha256 hash.

A key is `sg_` + 43 url-safe characters (32 random bytes). With that much entropy an unsalted
sha256 is enough to make the stored hash useless to an attacker, and it keeps lookup a single
indexed equality.
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
    """To tell keys apart in listings without revealing them."""
    return secret[:_SHOWN_PREFIX_LENGTH]
