"""A full file system under a running `supportgate serve`, for real: a small tmpfs holds the
service's log (stdout, stderr) and, on SQLite, its database. Filled, every POST is a 503
naming the cause (none hangs), /health/ready says why, and the log lines lost are counted in
/metrics and by the log once it can write again; freed, POSTs succeed again, and the audit log
verifies with nothing lost; SIGTERM stops the service in every state. Mounting needs root (CI
runs the tests as root); without it the test is skipped and tests/ledger/test_writer_faults.py
and tests/observability/test_logging.py inject ENOSPC at the write instead."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..api_support import hardware
from ..server import STOP_TIMEOUT_S, clean_env, make_keys, run_cli, serving
from ..services import temporary_database

TMPFS_SIZE = "16m"
LOST_NOTE = re.compile(r'\{[^{}\n]*"event":"log_lines_lost"[^{}\n]*\}')
REQUEST_LIMIT_S = 30.0  # a safety net against a hang, not a timing expectation


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of TMPFS_SIZE mounted for the test, unmounted after it."""
    mount, umount = shutil.which("mount"), shutil.which("umount")
    if os.geteuid() != 0 or mount is None or umount is None:
        pytest.skip("mounting a tmpfs needs root and mount(8) (CI runs as root)")
    mountpoint = tmp_path / "disk"
    mountpoint.mkdir()
    mounted = subprocess.run(
        [mount, "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(mountpoint)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mountpoint
    finally:
        subprocess.run([umount, "-l", str(mountpoint)], check=False)


def fill(disk: Path) -> Path:
    """Take every byte left on `disk` (halving the chunk down to one byte); the filler."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as out:
        chunk = 1 << 20
        while chunk:
            try:
                out.write(b"x" * chunk)
            except OSError:
                chunk //= 2
    return filler


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres-log", marks=pytest.mark.postgres),
    ]
)
def setup(request: pytest.FixtureRequest, small_disk: Path) -> Iterator[tuple[Path, str]]:
    """(disk, database URL): SQLite on the small disk, or PostgreSQL elsewhere with only the
    service's log on it (how the hang was found)."""
    if request.param == "sqlite":
        yield small_disk, f"sqlite:///{small_disk / 'supportgate.db'}"
        return
    with temporary_database(request.getfixturevalue("postgres_url")) as url:
        yield small_disk, url


def lost_log_lines(client: httpx.Client) -> float:
    [line] = [
        line
        for line in client.get("/metrics").text.splitlines()
        if line.startswith("supportgate_log_lines_lost_total ")
    ]
    return float(line.split()[1])


def test_a_full_disk_answers_503_and_recovers_with_nothing_lost(
    setup: tuple[Path, str], tmp_path: Path
) -> None:
    disk, database_url = setup
    database_on_disk = database_url.startswith("sqlite")
    keys = make_keys(database_url)
    env = clean_env(SUPPORTGATE_DATABASE_URL=database_url)
    with (
        serving(disk / "work", env=env) as served,
        httpx.Client(base_url=served.url, timeout=REQUEST_LIMIT_S) as client,
    ):
        ci = {"Authorization": f"Bearer {keys['ci']}"}

        def post(name: str) -> httpx.Response:
            return client.post("/v1/evaluations", json=hardware(name), headers=ci)

        assert post("before").status_code == 201
        filler = fill(disk)
        during = [post(f"during-{n}") for n in range(3)]
        if database_on_disk:  # the database refuses: 503 naming why, and not ready
            assert {response.status_code for response in during} == {503}, during[0].text
            assert "disk is full" in during[0].json()["detail"]
            ready = client.get("/health/ready")
            assert ready.status_code == 503
            assert "disk is full" in ready.json()["checks"]["ledger"]
        else:  # only the log is full: its lines are lost, never a decision
            assert [response.status_code for response in during] == [201, 201, 201]
            assert client.get("/health/ready").status_code == 200

        for _ in range(50):  # request lines past the log file's last, partly written page
            assert client.get("/health/live").status_code == 200
        assert lost_log_lines(client) > 0  # counted, not silently dropped
        filler.unlink()
        after = [post(f"after-{n}") for n in range(3)]
        assert [response.status_code for response in after] == [201, 201, 201]
        told = LOST_NOTE.findall(served.stdout.read_text(errors="replace"))  # a torn line may
        assert sum(json.loads(note)["lost"] for note in told) == lost_log_lines(client)  # lead
        assert served.stop() in (0, -15)  # SIGTERM: stopped (uvicorn re-raises the signal)

    verified = run_cli(["audit", "verify"], env=env, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_sigterm_stops_a_service_whose_disk_is_full(small_disk: Path) -> None:
    database_url = f"sqlite:///{small_disk / 'supportgate.db'}"
    keys = make_keys(database_url)
    env = clean_env(SUPPORTGATE_DATABASE_URL=database_url)
    with serving(small_disk / "work", env=env) as served:
        fill(small_disk)
        response = httpx.post(
            f"{served.url}/v1/evaluations",
            json=hardware("during"),
            headers={"Authorization": f"Bearer {keys['ci']}"},
            timeout=REQUEST_LIMIT_S,
        )
        assert response.status_code == 503
        served.process.terminate()
        assert served.process.wait(timeout=STOP_TIMEOUT_S) in (0, -15)
