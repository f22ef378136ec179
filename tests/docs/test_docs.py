"""The README and docs/: every relative link leads to a file the repository holds (so the
README's one line per document and docs/README.md's index stay true when pages move), and the
README keeps to its budget of 15,000 bytes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\]\(([\w./-]+)(?:#[\w-]*)?\)")
_CODE = re.compile(r"```.*?```", re.DOTALL)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_lead_to_files(page: Path) -> None:
    text = _CODE.sub("", page.read_text())
    broken = [target for target in _LINK.findall(text) if not (page.parent / target).exists()]
    assert broken == [], f"{page.relative_to(ROOT)} links to files that do not exist: {broken}"


def test_a_broken_link_is_found() -> None:
    assert _LINK.findall("see [x](docs/gone.md#part) and [y](https://example.com)") == [
        "docs/gone.md"
    ]


def test_the_readme_stays_within_its_budget() -> None:
    # Issue 24's budget: the README says what supportgate does, starts a stranger and tours
    # the service; everything else has its page under docs/.
    assert len((ROOT / "README.md").read_bytes()) <= 15_000
