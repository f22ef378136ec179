"""The console's matrix page shows where a version read from a matrix source came from."""

from __future__ import annotations

import html
import re
from pathlib import Path

from ..api import running_api
from ..matrix_upstreams import GitRepo, with_sm90
from ..waiting import wait_until
from .support import login


def test_the_matrix_page_shows_a_versions_commit(sqlite_template: Path, tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    commit = repo.commit(with_sm90("2026.12.1"))
    database = tmp_path / "supportgate.db"
    database.write_bytes(sqlite_template.read_bytes())
    with running_api(
        f"sqlite:///{database}",
        matrix_source=repo.source(),
        matrix_poll=3600.0,
        matrix_cache_dir=tmp_path / "cache",
    ) as api:
        wait_until(lambda: api.runtime.matrix_source.view().last_sync_at, "the start's sync")
        login(api)
        page = api.client.get("/ui/matrix")
        assert page.status_code == 200
        text = html.unescape(page.text)
        assert f'<code title="{repo.source()}, read ' in text
        assert f">{commit[:12]}</code>" in text
        # the title is text: the time in UTC, no element inside the attribute
        title = re.search(r'<code title="([^"]*)">' + commit[:12], page.text)
        assert title is not None, page.text
        assert re.fullmatch(r".*, read \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", title.group(1))
