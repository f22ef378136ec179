"""Standard Webhooks signatures (https://www.standardwebhooks.com/, symmetric scheme; the
secret and signature formats: docs/webhooks.md).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"  # noqa: S105 - the prefix the spec gives secrets, not a secret
SECRET_BYTES = 32  # the spec asks for 24 to 64 random bytes


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def secret_key(secret: str) -> bytes:
    encoded = secret.removeprefix(SECRET_PREFIX)
    try:
        return base64.b64decode(encoded, validate=True)
    except binascii.Error as exc:
        raise ValueError("a webhook secret is `whsec_` followed by base64") from exc


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = b"%s.%d.%s" % (message_id.encode(), timestamp, body)
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(secret: str, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secret, message_id, timestamp, body),
    }
