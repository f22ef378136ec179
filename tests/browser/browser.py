"""Headless Chromium from Debian's package (/usr/bin/chromium), driven by Playwright; never a
browser Playwright downloads. A served console and a logged-in page, for tests and screenshots."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

from ..matrix_upstreams import GitRepo
from ..receiver import ALLOW
from ..server import Served, clean_env, make_keys, serving
from .seed import seed

CHROMIUM = Path("/usr/bin/chromium")
REQUIRE_FLAG = "SUPPORTGATE_REQUIRE_BROWSER"
MISSING = f"no Chromium at {CHROMIUM} (apt-get install -y chromium; scripts/install does it)"


@contextmanager
def chromium() -> Iterator[Browser]:
    # As root (CI containers) Chromium's sandbox cannot start: run it without.
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=args
        )
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Console:
    served: Served
    keys: dict[str, str]

    @property
    def url(self) -> str:
        return self.served.url

    def page(self, browser: Browser, *, role: str | None = "procurement") -> Page:
        """A new browser context's page, logged in through the form with the role's key."""
        context = browser.new_context(
            accept_downloads=True, viewport={"width": 1280, "height": 900}
        )
        page = context.new_page()
        page.set_default_timeout(15_000)
        watch_console(page)
        if role is not None:
            log_in(page, self.url, self.keys[role])
        return page


_CONSOLE_LOGS: dict[int, list[str]] = {}


def watch_console(page: Page) -> None:
    """Keep what the page's developer console says (csp_violations reads it)."""
    said = _CONSOLE_LOGS.setdefault(id(page), [])

    def heard(message: ConsoleMessage) -> None:
        said.append(message.text)

    def closed(_page: Page) -> None:
        _CONSOLE_LOGS.pop(id(page), None)

    page.on("console", heard)
    page.on("close", closed)


def csp_violations(page: Page) -> list[str]:
    """What Chromium logged against a Content-Security-Policy on this page so far (each
    blocked script, style, frame or load: "... violates the following Content Security
    Policy directive ..." or "Refused to ... Content Security Policy ...")."""
    return [text for text in _CONSOLE_LOGS.get(id(page), []) if "Content Security Policy" in text]


def log_in(page: Page, url: str, key: str) -> None:
    page.goto(f"{url}/ui/manifests")
    page.wait_for_url("**/ui/login?next=*")
    page.fill("input[name=key]", key)
    page.click("button[type=submit]")


@contextmanager
def seeded_console(workdir: Path) -> Iterator[Console]:
    """`supportgate serve` on a SQLite file in `workdir`, with one key per role and the seed;
    the matrix followed from a git repository in `workdir` (empty until the seed commits)."""
    database = f"sqlite:///{workdir / 'supportgate.db'}"
    keys = make_keys(database)
    source = GitRepo(workdir / "matrix-source")
    env = clean_env(
        SUPPORTGATE_DATABASE_URL=database,
        SUPPORTGATE_WEBHOOK_ALLOW=",".join(ALLOW),
        SUPPORTGATE_MATRIX_SOURCE=source.source(),
        SUPPORTGATE_MATRIX_POLL="1h",  # the seed asks for its sync
    )
    with serving(workdir, env=env) as served:
        seed(served.url, keys, source)
        yield Console(served, keys)
