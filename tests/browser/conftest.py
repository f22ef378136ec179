"""Fixtures of the browser tests: Chromium (skipped with the reason printed when it is
missing, failed when SUPPORTGATE_REQUIRE_BROWSER=1), one seeded server per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from ..services import require_or_skip
from .browser import CHROMIUM, MISSING, REQUIRE_FLAG, Console, chromium, seeded_console


# One Playwright per module, not per session: its sync API keeps an event loop running in the
# worker's main thread, and the worker's later modules (asyncio.run) must find none.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.is_file():
        require_or_skip(REQUIRE_FLAG, MISSING)
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    with seeded_console(tmp_path_factory.mktemp("console")) as served:
        yield served


@pytest.fixture
def page(browser: Browser, console: Console) -> Iterator[Page]:
    opened = console.page(browser)
    try:
        yield opened
    finally:
        opened.context.close()
