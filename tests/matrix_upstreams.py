"""Matrix sources for tests: a real git repository (an upstream bare repository, pushed to
from a working clone, so a force-push that rewrites history is a real one) and a real https
server on loopback (a trustme CA; ETag, 304, scripted failures, a stall released by the test).
"""

from __future__ import annotations

import hashlib
import shutil
import ssl
import subprocess
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

import trustme
import yaml

from supportgate.config import DEFAULT_POLICY_DIR

GIT = shutil.which("git") or "git"
STALL_LIMIT_S = 60.0
"""How long a stalled answer waits for the test to release it (a safety net only)."""


def matrix_document(version: str, **changes: Any) -> dict[str, Any]:
    """The default matrix under another `version`, with `changes` at the top level."""
    document = yaml.safe_load((DEFAULT_POLICY_DIR / "matrix" / "data.yaml").read_text())
    assert isinstance(document, dict)
    return {**document, "version": version, **changes}


def matrix_yaml(version: str, **changes: Any) -> bytes:
    return yaml.safe_dump(matrix_document(version, **changes), sort_keys=False).encode()


def with_sm90(version: str) -> bytes:
    """A matrix that lists nvidia sm90 for deepinfer: H100 pools become `supported`."""
    document = matrix_document(version)
    document["engines"]["deepinfer"]["platforms"].append(
        {
            "vendor": "nvidia",
            "arch": "sm90",
            "toolkit": {"name": "cuda", "min": "12.4", "below": "13"},
        }
    )
    return yaml.safe_dump(document, sort_keys=False).encode()


class GitRepo:
    """`upstream` (bare; what the service fetches) and `work` (a clone the test commits in)."""

    def __init__(self, root: Path, file: str = "matrix.yaml", branch: str = "main") -> None:
        self.upstream = root / "upstream.git"
        self.work = root / "work"
        self.file = file
        self.branch = branch
        root.mkdir(parents=True, exist_ok=True)
        _git(root, "init", "--bare", "--quiet", f"--initial-branch={branch}", str(self.upstream))
        _git(root, "init", "--quiet", f"--initial-branch={branch}", str(self.work))
        _git(self.work, "remote", "add", "origin", str(self.upstream))

    def source(self, ref: str | None = None) -> str:
        return f"git+{self.upstream}#{ref or self.branch}:{self.file}"

    def commit(self, content: bytes, message: str = "matrix", *, push: bool = True) -> str:
        """Commit `content` as the matrix file (and push it); the commit's id."""
        path = self.work / self.file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        _git(self.work, "add", self.file)
        _git(self.work, "commit", "--quiet", "--allow-empty", "-m", message)
        if push:
            _git(self.work, "push", "--quiet", "origin", self.branch)
        return self.head()

    def rewrite(self, content: bytes, message: str = "rewritten") -> str:
        """Drop the last commit, commit `content` instead and force-push: history rewritten."""
        _git(self.work, "reset", "--quiet", "--hard", "HEAD~1")
        commit = self.commit(content, message, push=False)
        _git(self.work, "push", "--quiet", "--force", "origin", self.branch)
        return commit

    def head(self) -> str:
        return _git(self.work, "rev-parse", "HEAD").strip()

    def is_ancestor(self, older: str, newer: str) -> bool:
        done = subprocess.run(
            [GIT, "merge-base", "--is-ancestor", older, newer],
            cwd=self.upstream,
            capture_output=True,
            check=False,
        )
        return done.returncode == 0


def _git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(cwd),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    done = subprocess.run(
        [GIT, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


Reply = int | Literal["stall"]
STALL: Literal["stall"] = "stall"


@dataclass
class Served:
    """What the https server answers: `body` with `etag` (None: no ETag header), 304 to a
    matching If-None-Match; `script` replies first (a status, or STALL: no answer until
    `release` is set)."""

    body: bytes = b""
    etag: str | None = None
    script: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, str]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def publish(self, body: bytes, *, etag: bool = True) -> None:
        self.body = body
        self.etag = f'"{hashlib.sha256(body).hexdigest()[:16]}"' if etag else None


@dataclass
class HttpsServer:
    url: str
    ca_file: Path
    served: Served


@contextmanager
def https_server(tmp_path: Path, path: str = "/matrix.yaml") -> Iterator[HttpsServer]:
    """An https server on 127.0.0.1 with a certificate for 127.0.0.1 from a test CA (its PEM
    at `ca_file`)."""
    ca = trustme.CA()
    certificate = ca.issue_cert("127.0.0.1")
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    certificate.configure_cert(context)
    served = Served()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(served))
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield HttpsServer(
            url=f"https://127.0.0.1:{server.server_address[1]}{path}",
            ca_file=ca_file,
            served=served,
        )
    finally:
        served.release.set()
        server.shutdown()
        server.server_close()


def _handler(served: Served) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.requests.append({k.lower(): v for k, v in self.headers.items()})
            reply = served.script.popleft() if served.script else 200
            if reply == STALL:
                served.release.wait(STALL_LIMIT_S)
                return
            if reply != 200:
                self._answer(reply, b"no")
                return
            if served.etag is not None and self.headers.get("if-none-match") == served.etag:
                self._answer(304, b"")
                return
            self._answer(200, served.body)

        def _answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            if served.etag is not None and status in (200, 304):
                self.send_header("ETag", served.etag)
            self.send_header("Content-Type", "application/yaml")
            self.send_header("Content-Length", str(len(body)) if status != 304 else "0")
            self.end_headers()
            if status != 304:
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
