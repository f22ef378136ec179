"""PNG screenshots of the console's main pages, for the README: a served console seeded with
the examples (tests/browser/seed.py), driven in headless Chromium.

Run: scripts/screenshots [DIRECTORY]   (default docs/screenshots)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import yaml
from playwright.sync_api import Page

from .browser import CHROMIUM, MISSING, chromium, seeded_console
from .seed import proposed_matrix

DEFAULT_DIRECTORY = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def shoot(page: Page, directory: Path, name: str) -> Path:
    path = directory / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def take(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    taken = []
    with (
        tempfile.TemporaryDirectory() as workdir,
        chromium() as browser,
        seeded_console(Path(workdir)) as console,
    ):
        login = console.page(browser, role=None)
        login.goto(f"{console.url}/ui/manifests")
        taken.append(shoot(login, directory, "login"))
        login.context.close()
        page = console.page(browser, role="admin")
        pages = [
            ("manifests", "/ui/manifests"),
            ("manifest-timeline", "/ui/manifests/HardwareManifest/h100-pool-a"),
            ("manifest-deployment", "/ui/manifests/DeploymentManifest/v41-flash-h100-prod"),
            ("audit", "/ui/audit?kind=DeploymentManifest"),
            ("matrix-diff", "/ui/matrix"),
            ("alerts", "/ui/alerts"),
            ("fleet", "/ui/fleet"),
            ("webhooks", "/ui/webhooks"),
            ("waivers", "/ui/waivers"),
        ]
        for name, path in pages:
            page.goto(console.url + path)
            taken.append(shoot(page, directory, name))
        page.goto(f"{console.url}/ui/impact")
        proposal = yaml.safe_load(page.input_value("textarea#matrix"))
        proposal = proposed_matrix(proposal, "2027.1.1")
        platforms = proposal["engines"]["deepinfer"]["platforms"]
        proposal["engines"]["deepinfer"]["platforms"] = [
            p for p in platforms if p["arch"] != "sm90"
        ]
        page.fill("textarea#matrix", yaml.safe_dump(proposal, sort_keys=False))
        page.click("form#impact-form button")
        page.wait_for_selector("section#impact")
        taken.append(shoot(page, directory, "impact"))
        page.context.close()
    return taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIRECTORY)
    args = parser.parse_args()
    if not CHROMIUM.is_file():
        sys.exit(MISSING)
    for path in take(args.directory):
        print(path)


if __name__ == "__main__":
    main()
