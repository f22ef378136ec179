"""`supportgate opa setup`: the key and tokens the service and OPA share, what exists kept; why
OPA's authorization policy gets the API token's SHA-256: docs/opa.md (CONTRACT 11.2)."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from supportgate.errors import UsageError

from .opa_bundle import BundleSigner

# File names, no secrets:
VERIFICATION_KEY = "bundle-verification.pem"
BUNDLE_TOKEN = "bundle-token"  # noqa: S105
API_TOKEN = "opa-api-token"  # noqa: S105
API_TOKEN_DATA = "opa-api-token-sha256.json"  # noqa: S105
SECRET_MODE = 0o600
PUBLIC_MODE = 0o644


def setup(signing_key: Path, shared: Path) -> list[Path]:
    try:
        return _setup(signing_key, shared)
    except OSError as exc:
        field = "--signing-key" if exc.filename == str(signing_key) else "--dir"
        raise UsageError(f"cannot write {exc.filename}: {exc.strerror}", field=field) from exc


def _setup(signing_key: Path, shared: Path) -> list[Path]:
    written: list[Path] = []
    if not signing_key.exists():
        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        written.append(_write(signing_key, pem, SECRET_MODE))
    shared.mkdir(parents=True, exist_ok=True)
    verification = shared / VERIFICATION_KEY
    if not verification.exists():
        public = BundleSigner.from_file(signing_key).public_key_pem()
        written.append(_write(verification, public, PUBLIC_MODE))
    if not (shared / BUNDLE_TOKEN).exists():
        written.append(_write(shared / BUNDLE_TOKEN, _token(), SECRET_MODE))
    api_token = shared / API_TOKEN
    if not api_token.exists():
        written.append(_write(api_token, _token(), SECRET_MODE))
    if not (shared / API_TOKEN_DATA).exists():
        digest = hashlib.sha256(api_token.read_bytes()).hexdigest()
        document = json.dumps(digest).encode()
        written.append(_write(shared / API_TOKEN_DATA, document, SECRET_MODE))
    return written


def _token() -> bytes:
    """No newline: OPA's --set-file takes the file's bytes as the value."""
    return secrets.token_urlsafe(32).encode()


def _write(path: Path, content: bytes, mode: int) -> Path:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(descriptor, "wb") as file:
        os.fchmod(descriptor, mode)  # exactly this mode, whatever the umask
        file.write(content)
    return path
