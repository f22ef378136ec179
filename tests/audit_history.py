"""A signed history for the audit tests: built once per backend by a running service, then
copied for each test (a SQLite backup, a PostgreSQL database made from it as a template),
so that a test may edit its copy behind the service's back.

The history: the default matrix (leaf 0), the hardware examples, checkpoint A, the
deployment examples, a waiver created (its sweep records a `waiver` decision), another
created and deleted, one deployment untracked, a pool posted again with new content, and
checkpoint B at the head. Both checkpoints are stored in `ledger_checkpoints` and appended
to a witness file, signed with a key written where SUPPORTGATE_SIGNING_KEY_FILE can name it.

The service signs them (its checkpointer, asked at A and B); it also signs at its start and
after each sweep, and those other stored checkpoints are deleted once it has stopped, so
that A and B are the history's only ones. `sign_head` signs as an attacker holding the key
would, with the ledger's own checkpoint and note code.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import yaml
from sqlalchemy import create_engine, delete, insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import sessionmaker
from sqlalchemy.pool import NullPool
from sqlmodel import Session

from supportgate.db import LedgerCheckpoint, transaction
from supportgate.db.engine import database_url
from supportgate.ledger.log import latest_checkpoint, read_head
from supportgate.tlog import Checkpoint, NoteSigner, sign_checkpoint

from .api import Api, running_api
from .examples import expected
from .services import drop_database

ORIGIN = "supportgate/audit-tests"
UNTRACKED = ("DeploymentManifest", "v41-flash-b200-api")
WAIVED = ("DeploymentManifest", "v41-flash-h100-prod")
REPOSTED_POOL = "hw-h100-pool-a.yaml"
_checkpoints = LedgerCheckpoint.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class History:
    url: str
    key_file: Path
    """The service's signing key (PRIVATE+KEY+...)."""
    verifier_key: str
    witness: Path
    checkpoints: tuple[int, int]
    """The sizes of checkpoints A and B; B is the head."""


def sign_head(sessions: sessionmaker[Session], signer: NoteSigner, witness: Path) -> int:
    """Sign the head as the service does: store the note, append it to the witness file."""
    with transaction(sessions, write=True) as session:
        head = read_head(session)
        note = sign_checkpoint(Checkpoint(signer.name, head.size, head.root), signer)
        session.execute(
            insert(_checkpoints).values(tree_size=head.size, note=note, signed_at=datetime.now(UTC))
        )
    with witness.open("a", encoding="utf-8") as file:
        file.write(("\n" if witness.stat().st_size else "") + note)
    return head.size


def sign_service_head(api: Api, witness: Path) -> int:
    """The service signs its head now; its note appended to the witness file."""
    api.runtime.checkpointer.sign_now()
    with transaction(api.runtime.sessions) as session:
        latest = latest_checkpoint(session)
    assert latest is not None
    with witness.open("a", encoding="utf-8") as file:
        file.write(("\n" if witness.stat().st_size else "") + latest.note)
    return latest.tree_size


def build(url: str, directory: Path) -> History:
    signer = NoteSigner.generate(ORIGIN)
    key_file = directory / "supportgate-signing.key"
    key_file.write_text(signer.encoded() + "\n", encoding="utf-8")
    key_file.chmod(0o600)
    witness = directory / "witness.txt"
    witness.touch()
    files = expected().files
    with running_api(
        url, signing_key_file=key_file, log_origin=ORIGIN, checkpoint_interval=3600.0
    ) as api:
        for path in files:
            if path.name.startswith("hw-"):
                _post(api, path)
        first = sign_service_head(api, witness)
        for path in files:
            if not path.name.startswith("hw-"):
                _post(api, path)
        _waiver(api, WAIVED)
        another = _waiver(api, ("DeploymentManifest", "v41-flash-b200-batch"))
        _ok(api.client.delete(f"/v1/waivers/{another}", headers=api.headers("admin")))
        _ok(
            api.client.delete(
                "/v1/manifests/{}/{}".format(*UNTRACKED), headers=api.headers("admin")
            )
        )
        reposted = _reposted(next(p for p in files if p.name == REPOSTED_POOL), directory)
        _post(api, reposted, role="admin")  # only an admin changes a tracked manifest's owner
        assert api.runtime.reevaluation.wait_idle()
        second = sign_service_head(api, witness)
        with transaction(api.runtime.sessions, write=True) as session:  # A and B only
            kept = _checkpoints.c.tree_size.not_in([first, second])
            session.execute(delete(_checkpoints).where(kept))
    return History(url, key_file, signer.verifier().encoded(), witness, (first, second))


def _post(api: Api, path: Path, role: str = "ci") -> None:
    response = api.post_manifest(path, role=role)
    assert response.status_code == 201, response.text
    assert api.runtime.reevaluation.wait_idle()


def _ok(response: httpx.Response) -> None:
    assert response.is_success, response.text


def _waiver(api: Api, manifest: tuple[str, str]) -> str:
    response = api.client.post(
        "/v1/waivers",
        json={
            "rule": "port.production",
            "kind": manifest[0],
            "name": manifest[1],
            "justification": "pilot with the vendor's engineers on site",
            "expires_at": (datetime.now(UTC) + timedelta(days=30)).isoformat(),
        },
        headers=api.headers("admin"),
    )
    _ok(response)
    assert api.runtime.reevaluation.wait_idle()
    return str(response.json()["id"])


def _reposted(path: Path, directory: Path) -> Path:
    """The pool with a new owner: new content under the same name."""
    document = yaml.safe_load(path.read_text("utf-8"))
    document["metadata"]["owner"] = "platform-team-reorganised"
    changed = directory / path.name
    changed.write_text(yaml.safe_dump(document), encoding="utf-8")
    return changed


@contextmanager
def copied(history: History, directory: Path) -> Iterator[History]:
    """A copy of the history's database for one test, with its own witness file."""
    witness = directory / "witness.txt"
    witness.write_bytes(history.witness.read_bytes())
    url = make_url(history.url)
    if url.get_backend_name() == "sqlite":
        target = directory / "supportgate.db"
        with sqlite3.connect(url.database or "") as source, sqlite3.connect(target) as backup:
            source.backup(backup)
        yield replace(history, url=f"sqlite:///{target}", witness=witness)
        return
    name = f"supportgate_test_{uuid.uuid4().hex[:16]}"
    admin = create_engine(
        database_url(url.set(database="postgres").render_as_string(hide_password=False)),
        poolclass=NullPool,
        isolation_level="AUTOCOMMIT",
    )
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{url.database}"'))
        try:
            copy = url.set(database=name).render_as_string(hide_password=False)
            yield replace(history, url=copy, witness=witness)
        finally:
            drop_database(admin, name)
    finally:
        admin.dispose()
