"""OPA for tests, run with docker-compose.yml's command (opa/config.yaml,
opa/system/authz/authz.rego): its API needs the token, and it pulls and verifies the
service's signed bundle (docs/opa.md).

One set of credentials per test session (`shared_credentials`, written by the same code as
`supportgate opa setup`). By default OPA pulls from a loopback server in the test process
that serves the bundle the service builds (build_bundle on the policies and the default
matrix, signed with the session's key): its revision is the one every in-process service on
those credentials expects, so in-process API tests evaluate on OPA as a served one does. A
test of the service's own endpoint points OPA at the service instead (`bundle_service`).
"""

from __future__ import annotations

import atexit
import hashlib
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests
import yaml

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.matrix import load_matrix_file, prepare
from supportgate.policy import PolicyBundle
from supportgate.policy.opa_bundle import BUNDLE_FILE, BundleSigner, build_bundle, bundle_revision
from supportgate.policy.opa_setup import API_TOKEN, BUNDLE_TOKEN, setup

from .services import free_port

REPO = Path(__file__).resolve().parents[1]
OPA_CONFIG = REPO / "opa"
OPA_START_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class OpaCredentials:
    signing_key: Path
    directory: Path

    @property
    def api_token(self) -> str:
        return (self.directory / API_TOKEN).read_text(encoding="ascii")

    @property
    def bundle_token(self) -> str:
        return (self.directory / BUNDLE_TOKEN).read_text(encoding="ascii")

    def headers(self) -> dict[str, str]:
        """For calling OPA's API as the service (or an insider holding its token) does."""
        return {"Authorization": f"Bearer {self.api_token}"}

    def settings(self) -> dict[str, Any]:
        """Settings fields for a service using OPA on these credentials."""
        return {
            "opa_token": self.api_token,
            "bundle_signing_key_file": self.signing_key,
            "bundle_token": self.bundle_token,
        }

    def env(self) -> dict[str, str]:
        """The same as environment variables, for a `supportgate serve` process."""
        return {
            "SUPPORTGATE_OPA_TOKEN": self.api_token,
            "SUPPORTGATE_BUNDLE_SIGNING_KEY_FILE": str(self.signing_key),
            "SUPPORTGATE_BUNDLE_TOKEN": self.bundle_token,
        }


@cache
def shared_credentials() -> OpaCredentials:
    directory = Path(tempfile.mkdtemp(prefix="supportgate-test-opa-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    credentials = OpaCredentials(signing_key=directory / "bundle-signing.pem", directory=directory)
    setup(credentials.signing_key, credentials.directory)
    return credentials


def default_matrix_document(policies: PolicyBundle) -> dict[str, Any]:
    return dict(prepare(load_matrix_file(policies.default_matrix_path)).document)


def expected_revision(policies: PolicyBundle) -> str:
    """The bundle revision a service on `policies` and the default matrix serves."""
    return bundle_revision(policies, default_matrix_document(policies))


@contextmanager
def serving_bundle(
    credentials: OpaCredentials, archive: bytes | Callable[[], bytes] | None = None
) -> Iterator[str]:
    """A loopback bundle service (for OPA's `services.supportgate.url`) serving `archive`
    (default: the service's bundle on the default policies; a callable: what it returns at
    each poll) to the bundle token only, and 304 to a poll that holds it already (so OPA
    activates it once, as with the service)."""
    if archive is None:
        policies = PolicyBundle.load(DEFAULT_POLICY_DIR)
        signer = BundleSigner.from_file(credentials.signing_key)
        archive = build_bundle(policies, default_matrix_document(policies), signer).archive
    current = archive if callable(archive) else (lambda: archive)
    token = credentials.bundle_token

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.headers.get("Authorization") != f"Bearer {token}":
                self.send_response(401)
                self.end_headers()
                return
            if self.path != f"/v1/bundles/{BUNDLE_FILE}":
                self.send_response(404)
                self.end_headers()
                return
            served = current()
            etag = f'"{hashlib.sha256(served).hexdigest()}"'
            if self.headers.get("If-None-Match") == etag:  # OPA keeps what it activated
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("ETag", etag)
            self.send_header("Content-Type", "application/gzip")
            self.send_header("Content-Length", str(len(served)))
            self.end_headers()
            self.wfile.write(served)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/bundles"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def compose_opa_args(address: str, service: str, credentials: Path) -> list[str]:
    """docker-compose.yml's `opa run` command, on this machine: its files at their paths here,
    listening on `address`, pulling from `service`, polling every 1-2 s, logging errors only."""
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    args: list[str] = []
    for arg in compose["services"]["opa"]["command"]:
        if arg.startswith(("--addr", "--log-level")):
            continue
        args.append(
            arg.replace("/opa/", f"{OPA_CONFIG}/").replace("/credentials/", f"{credentials}/")
        )
    return [
        *args,
        f"--addr={address}",
        "--log-level=error",
        f"--set=services.supportgate.url={service}",
        "--set=bundles.supportgate.polling.min_delay_seconds=1",
        "--set=bundles.supportgate.polling.max_delay_seconds=2",
    ]


@dataclass
class RunningOpa:
    url: str
    process: subprocess.Popen[bytes]
    credentials: OpaCredentials


@contextmanager
def running_opa(
    opa: str,
    *,
    bundle_service: str | None = None,
    credentials: OpaCredentials | None = None,
) -> Iterator[RunningOpa]:
    """`opa run --server` on a free loopback port as docker-compose runs it, pulling from
    `bundle_service` (default: serving_bundle). Without `bundle_service` it is yielded once
    it has activated the bundle; with one, once it answers (the service may start later)."""
    credentials = credentials or shared_credentials()
    with ExitStack() as stack:
        service = bundle_service or stack.enter_context(serving_bundle(credentials))
        with _opa_process(
            opa, service, credentials, wait_for_bundle=bundle_service is None
        ) as running:
            yield running


@contextmanager
def _opa_process(
    opa: str, service: str, credentials: OpaCredentials, *, wait_for_bundle: bool
) -> Iterator[RunningOpa]:
    address = f"127.0.0.1:{free_port()}"
    # A file, not a pipe: OPA blocks on a full pipe nobody reads (it logs every failed pull).
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [opa, *compose_opa_args(address, service, credentials.directory)],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        url = f"http://{address}"
        try:
            path = "/health?bundles" if wait_for_bundle else "/health"
            _wait_healthy(url, process, log, path=path)
            yield RunningOpa(url=url, process=process, credentials=credentials)
        finally:
            process.terminate()
            process.wait(timeout=10)


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Any, *, path: str) -> None:
    deadline = time.monotonic() + OPA_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"opa exited with {process.returncode}: {log.read().decode()}")
        try:
            if requests.get(f"{url}{path}", timeout=1).status_code == 200:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.05)
    log.seek(0)
    raise RuntimeError(
        f"opa at {url} did not answer {path} in {OPA_START_TIMEOUT_S}s: {log.read().decode()}"
    )
