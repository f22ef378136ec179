"""The policies and the default matrix as a signed OPA bundle, for OPA to pull: what `opa
build --signing-key` makes of the policy directory, plus the service's entry module
(GATE_MODULE). docs/opa.md gives its files, their hashing (OPA's, bundle/hash.go) and why the
entry module asks as it does. The revision is a digest of the files, so every replica serving
the same files computes the same one."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_pem_private_key,
)

from supportgate.errors import UsageError

from .bundle import PolicyBundle
from .prepared import prepared_document

BUNDLE_NAME = "supportgate"  # OPA reports it at data.system.bundles.<name>
BUNDLE_FILE = f"{BUNDLE_NAME}.tar.gz"
ROOTS = ("supportgate", "matrix")
SIGNING_ALGORITHM = "ES256"
KEY_ID = "supportgate"  # `bundles.supportgate.signing.keyid` in OPA's configuration
KEY_SETTING = "SUPPORTGATE_BUNDLE_SIGNING_KEY_FILE"

GATE_PATH = "supportgate/gate/gate.rego"
GATE_MODULE = f"""\
# The service's entry to its OPA bundle (supportgate/policy/opa_bundle.py writes this module
# into the bundle; it is not one of the policies): an answer only from the bundle revision
# the service expects, under the matrix the service sends.
package supportgate.gate

expected if data.system.bundles.{BUNDLE_NAME}.manifest.revision == input.revision

result := answer if {{
	expected
	answer := data.supportgate.decision.result with input as input.item
		with data.matrix as input.matrix
		with data.supportgate.prepared as input.prepared
}}
"""


@dataclass(frozen=True, slots=True)
class OpaBundle:
    revision: str
    archive: bytes

    @property
    def etag(self) -> str:
        """The revision names the content, so it is the ETag on every replica (the archives
        differ: an ECDSA signature is new every time)."""
        return f'"{self.revision}"'


class BundleSigner:
    def __init__(self, key: ec.EllipticCurvePrivateKey) -> None:
        self._key = key

    @classmethod
    def from_file(cls, path: Path) -> BundleSigner:
        try:
            key = load_pem_private_key(path.read_bytes(), password=None)
        except (OSError, ValueError, TypeError) as exc:
            raise UsageError(
                f"cannot read an EC private key (PEM) from {path}: {exc}", field=KEY_SETTING
            ) from exc
        if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
            raise UsageError(
                f"{path} holds no EC P-256 private key ({SIGNING_ALGORITHM})", field=KEY_SETTING
            )
        return cls(key)

    def public_key_pem(self) -> bytes:
        return self._key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)

    def sign(self, files: list[dict[str, str]]) -> str:
        return jwt.encode(
            {"files": files, "keyid": KEY_ID},
            self._key,
            algorithm=SIGNING_ALGORITHM,
            headers={"kid": KEY_ID},
        )


def bundle_files(policies: PolicyBundle, default_matrix: Mapping[str, Any]) -> dict[str, bytes]:
    files = {name: text.encode() for name, text in policies.modules}
    files[GATE_PATH] = GATE_MODULE.encode()
    files["data.json"] = _canonical_json(
        {"matrix": default_matrix, "supportgate": {"prepared": prepared_document(default_matrix)}}
    )
    return files


def bundle_revision(policies: PolicyBundle, default_matrix: Mapping[str, Any]) -> str:
    return _revision(bundle_files(policies, default_matrix))


def build_bundle(
    policies: PolicyBundle, default_matrix: Mapping[str, Any], signer: BundleSigner
) -> OpaBundle:
    files = bundle_files(policies, default_matrix)
    revision = _revision(files)
    files[".manifest"] = _canonical_json({"revision": revision, "roots": list(ROOTS)})
    hashes = [
        {"name": name, "hash": hashlib.sha256(content).hexdigest(), "algorithm": "SHA-256"}
        for name, content in sorted(files.items())
    ]
    files[".signatures.json"] = _canonical_json({"signatures": [signer.sign(hashes)]})
    return OpaBundle(revision=revision, archive=_archive(files))


def _revision(files: Mapping[str, bytes]) -> str:
    digest = hashlib.sha256()
    for name, content in sorted(files.items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    return f"sha256:{digest.hexdigest()}"


def _canonical_json(value: Any) -> bytes:
    """Compact and key-sorted: the bytes OPA hashes for a JSON file (the matrix is plain
    JSON: strings without U+2028/9 or control characters, where Go and Python escape alike)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _archive(files: Mapping[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content in sorted(files.items()):
            info = tarfile.TarInfo(f"/{name}")
            info.size = len(content)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(content))
    return gzip.compress(raw.getvalue(), mtime=0)
