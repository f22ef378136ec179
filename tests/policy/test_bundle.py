"""GET /v1/bundles/supportgate.tar.gz: the policies and the default matrix as the signed OPA
bundle OPA pulls (docs/opa.md), to the bundle token only, with an ETag. OPA's own verdict on
the signature is in tests/policy/test_engines.py and test_opa_served.py; here the
bundle is read as OPA reads it."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import jwt
import pytest

from supportgate.config import Settings
from supportgate.errors import UsageError
from supportgate.policy import PolicyBundle
from supportgate.runtime import Runtime

from ..api import Api, running_api
from ..opa import expected_revision, shared_credentials

BUNDLE = "/v1/bundles/supportgate.tar.gz"


@pytest.fixture
def bundle_api(tmp_path: Path) -> Iterator[Api]:
    """A service that serves the bundle (it has the signing key), on the embedded engine."""
    credentials = shared_credentials()
    with running_api(
        f"sqlite:///{tmp_path / 'supportgate.db'}",
        bundle_signing_key_file=credentials.signing_key,
        bundle_token=credentials.bundle_token,
    ) as running:
        yield running


def test_only_the_bundle_token_fetches_it(bundle_api: Api) -> None:
    for token in (None, "not-the-token", bundle_api.keys["admin"]):  # an API key is no bundle token
        response = bundle_api.client.get(
            BUNDLE, headers={"Authorization": f"Bearer {token}"} if token else {}
        )
        assert response.status_code == 401, token
        assert "bundle token" in response.json()["detail"]


def test_the_bundle_is_signed_over_every_file_and_owns_its_roots(
    bundle_api: Api, policy_bundle: PolicyBundle
) -> None:
    credentials = shared_credentials()
    response = bundle_api.client.get(
        BUNDLE, headers={"Authorization": f"Bearer {credentials.bundle_token}"}
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/gzip"
    with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as archive:
        files = {
            member.name.lstrip("/"): archive.extractfile(member).read()  # type: ignore[union-attr]
            for member in archive.getmembers()
        }

    manifest = json.loads(files[".manifest"])
    assert manifest == {
        "revision": expected_revision(policy_bundle),
        "roots": ["supportgate", "matrix"],
    }
    assert response.headers["etag"] == f'"{manifest["revision"]}"'
    assert json.loads(files["data.json"])["matrix"]["version"] == "2026.11.1"
    assert {name for name, _ in policy_bundle.modules} < set(files)

    (token,) = json.loads(files[".signatures.json"])["signatures"]
    public = (credentials.directory / "bundle-verification.pem").read_bytes()
    claims = jwt.decode(token, public, algorithms=["ES256"])  # raises on a bad signature
    assert jwt.get_unverified_header(token)["kid"] == "supportgate"
    signed = {entry["name"]: entry["hash"] for entry in claims["files"]}
    unsigned = {name: content for name, content in files.items() if name != ".signatures.json"}
    assert signed == {name: hashlib.sha256(body).hexdigest() for name, body in unsigned.items()}


def test_a_poll_with_the_current_etag_is_304(bundle_api: Api) -> None:
    headers = {"Authorization": f"Bearer {shared_credentials().bundle_token}"}
    etag = bundle_api.client.get(BUNDLE, headers=headers).headers["etag"]
    same = bundle_api.client.get(BUNDLE, headers={**headers, "If-None-Match": etag})
    assert (same.status_code, same.content, same.headers["etag"]) == (304, b"", etag)
    other = bundle_api.client.get(BUNDLE, headers={**headers, "If-None-Match": '"sha256:old"'})
    assert other.status_code == 200


def test_without_a_signing_key_no_bundle_is_served(tmp_path: Path) -> None:
    with running_api(f"sqlite:///{tmp_path / 'supportgate.db'}") as api:
        response = api.client.get(BUNDLE, headers={"Authorization": "Bearer anything"})
        assert response.status_code == 404
        assert "SUPPORTGATE_BUNDLE_SIGNING_KEY_FILE" in response.json()["detail"]


@pytest.mark.parametrize(
    ("missing", "field"),
    [
        ("bundle_signing_key_file", "SUPPORTGATE_BUNDLE_SIGNING_KEY_FILE"),
        ("bundle_token", "SUPPORTGATE_BUNDLE_TOKEN"),
        ("opa_token", "SUPPORTGATE_OPA_TOKEN"),
    ],
)
def test_opa_without_its_keys_refuses_to_start(tmp_path: Path, missing: str, field: str) -> None:
    credentials = shared_credentials().settings()
    settings = replace(
        Settings(database_url=f"sqlite:///{tmp_path / 'supportgate.db'}"),
        opa_url="http://127.0.0.1:8181",
        **{**credentials, missing: None},
    )
    with pytest.raises(UsageError) as refused:
        Runtime.build(settings)
    assert refused.value.field == field


def test_a_signing_key_that_is_no_p256_key_refuses_to_start(tmp_path: Path) -> None:
    (tmp_path / "key.pem").write_text("not a key\n")
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'supportgate.db'}",
        bundle_signing_key_file=tmp_path / "key.pem",
        bundle_token=shared_credentials().bundle_token,
    )
    with pytest.raises(UsageError) as refused:
        Runtime.build(settings)
    assert refused.value.field == "SUPPORTGATE_BUNDLE_SIGNING_KEY_FILE"


@pytest.mark.parametrize("value", ["0", "-1", "nan", "61", "soon"])
def test_the_opa_deadline_is_checked(value: str) -> None:
    with pytest.raises(UsageError) as refused:
        Settings.from_env({"SUPPORTGATE_OPA_TIMEOUT": value})
    assert refused.value.field == "SUPPORTGATE_OPA_TIMEOUT"
