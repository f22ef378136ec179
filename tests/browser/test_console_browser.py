"""The console in a real browser against a real server: log in, filter, the timeline, a diff
of two decisions, the CSV download, an impact analysis, the 403 page, log out; every page
under the Content-Security-Policy without a violation, and no framing by another page."""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import yaml
from playwright.sync_api import Browser, Page

from supportgate.audit.csv_export import CSV_COLUMNS
from supportgate.fleet.report import CSV_COLUMNS as FLEET_CSV_COLUMNS

from ..examples import expected
from .browser import Console, csp_violations
from .seed import proposed_matrix

pytestmark = pytest.mark.browser


def api(console: Console, path: str, **params: str) -> dict[str, object]:
    headers = {"Authorization": f"Bearer {console.keys['admin']}"}
    response = httpx.get(console.url + path, params=params, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


def names(page: Page, table: str) -> list[str]:
    return page.locator(f"table#{table} tbody tr td:nth-child(2) a").all_inner_texts()


def test_log_in_and_filter_the_tracked_manifests(page: Page, console: Console) -> None:
    assert page.url.endswith("/ui/manifests")
    assert "procurement (procurement)" in page.inner_text("header.top")
    assert len(names(page, "manifests")) == len(expected().decisions)
    page.select_option("select[name=verdict]", "rejected")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**verdict=rejected**")
    rejected = api(console, "/v1/manifests", verdict="rejected")["items"]
    assert isinstance(rejected, list)
    assert names(page, "manifests") == [m["name"] for m in rejected]
    assert page.locator("table#manifests .verdict.rejected").count() == len(rejected)
    page.select_option("select[name=verdict]", "")
    page.select_option("select[name=rule]", "port.consumer-card")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**rule=port.consumer-card**")
    consumer_cards = [name for _kind, name in expected().showing("port.consumer-card")]
    assert "rtx4090-workstation" in consumer_cards
    assert sorted(names(page, "manifests")) == consumer_cards


def test_open_a_timeline_and_diff_two_decisions(page: Page) -> None:
    page.click("table#manifests a:text-is('h100-pool-a')")
    page.wait_for_url("**/ui/manifests/HardwareManifest/h100-pool-a")
    # posted (experimental), turned by the synced matrix (supported), posted again (supported)
    points = page.locator("svg#timeline circle.point")
    assert points.count() == 3
    assert page.locator("svg#timeline circle.point.supported").count() == 2
    assert "matrix 2026.12.1" in (page.text_content("svg#timeline") or "")
    # the default compares the two latest; choose the newest and the first, the other way round
    options = page.locator("form#compare select[name=a] option")
    newest, older = options.nth(0).get_attribute("value"), options.nth(2).get_attribute("value")
    assert newest is not None
    assert older is not None
    page.select_option("form#compare select[name=a]", newest)
    page.select_option("form#compare select[name=b]", older)
    page.click("form#compare button")
    page.wait_for_url(f"**a={newest}**")
    diff = page.locator("section#diff")
    text = diff.inner_text()
    assert "verdict: experimental → supported" in text
    removed = diff.locator("tr.removed")
    assert removed.count() >= 1
    assert "support.platform" in removed.first.inner_text()
    assert "matrix_version" in text


def test_search_the_audit_and_download_csv(page: Page, console: Console) -> None:
    page.click("nav a:text-is('Audit')")
    page.select_option("select[name=verdict]", "rejected")
    page.fill("input[name=name]", "v41-flash-b200-api")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**verdict=rejected**")
    shown = page.locator("table#decisions tbody tr").count()
    expected = api(console, "/v1/audit", verdict="rejected", name="v41-flash-b200-api")["items"]
    assert isinstance(expected, list)
    assert shown == len(expected) >= 1
    with page.expect_download() as download:
        page.click("a.csv")
    saved = download.value.path()
    assert download.value.suggested_filename.startswith("supportgate-audit-")
    rows = list(csv.reader(io.StringIO(saved.read_text())))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [row[0] for row in rows[1:]] == [d["id"] for d in expected]
    assert {row[4] for row in rows[1:]} == {"rejected"}


def test_the_fleet_on_two_dates_and_its_csv(page: Page, console: Console) -> None:
    page.click("nav a:text-is('Fleet on a date')")
    page.wait_for_url("**/ui/fleet")
    today = page.input_value("input[name=to]")
    report = api(console, "/v1/reports/fleet")
    counts = report["by_verdict"]
    assert isinstance(counts, dict)
    # 30 days back nothing was tracked: every manifest tracked now is a change, with why
    changed = page.locator("table#fleet-changes tbody tr")
    assert changed.count() == counts["manifests"]
    rows = changed.all_inner_texts()
    assert any("h100-pool-a" in row and "not tracked → supported" in row for row in rows)
    assert any("tracked with port.production" in row for row in rows)
    page.fill("input[name=from]", today)
    page.click("form.filters button[type=submit]")
    page.wait_for_url(f"**from={today}**")
    assert "No manifest changed verdict" in page.inner_text("main")
    with page.expect_download() as download:
        page.click("a#csv-to")
    assert download.value.suggested_filename == f"supportgate-fleet-{today}.csv"
    table = list(csv.reader(io.StringIO(download.value.path().read_text())))
    assert tuple(table[0]) == FLEET_CSV_COLUMNS
    fleet_row = [str(counts[k]) for k in ("manifests", "supported", "experimental", "rejected")]
    assert table[1][:6] == ["fleet", "", *fleet_row]


def test_impact_of_a_pasted_matrix(page: Page, console: Console) -> None:
    current = api(console, "/v1/matrix")["document"]
    assert isinstance(current, dict)
    proposal = proposed_matrix(current, "2027.1.1")
    platforms = proposal["engines"]["deepinfer"]["platforms"]
    proposal["engines"]["deepinfer"]["platforms"] = [p for p in platforms if p["arch"] != "sm90"]
    page.click("nav a:text-is('Impact')")
    assert "deepinfer" in page.input_value("textarea#matrix")
    page.fill("textarea#matrix", yaml.safe_dump(proposal, sort_keys=False))
    page.click("form#impact-form button")
    page.wait_for_selector("section#impact")
    heading = page.inner_text("section#impact h2")
    assert "would change verdict" in heading
    changed = page.locator("table#impact-changes tbody tr").all_inner_texts()
    assert any("h100-pool-a" in row and "supported → experimental" in row for row in changed)
    page.fill("textarea#matrix", "version: [unclosed")
    page.click("form#impact-form button")
    assert "not valid YAML" in page.inner_text("p.error")


def test_a_ci_key_gets_the_403_page_and_logout_ends_the_session(
    browser: Browser, console: Console, page: Page
) -> None:
    ci = console.page(browser, role="ci")
    try:
        assert "the console needs the procurement role" in ci.inner_text("p.error")
        assert "(403)" in ci.inner_text("h1")
    finally:
        ci.context.close()
    page.click("form.logout button")
    page.wait_for_url("**/ui/login")
    page.goto(f"{console.url}/ui/audit")
    page.wait_for_url("**/ui/login?next=*")


def test_no_page_breaks_the_content_security_policy(browser: Browser, console: Console) -> None:
    """Every page, logged in as admin (who sees all of them), under the console's CSP: what
    the policy would block (an inline script, style or handler) shows up as a violation."""
    page = console.page(browser, role="admin")
    try:
        page.wait_for_url("**/ui/manifests")
        visited = []
        for link in page.locator("header.top nav a").all():
            visited.append(link.get_attribute("href"))
        assert "/ui/webhooks" in visited
        for path in [*visited, "/ui/manifests/HardwareManifest/h100-pool-a", "/ui/nothing"]:
            response = page.goto(f"{console.url}{path}")
            assert response is not None
            assert response.headers["content-security-policy"].startswith("default-src 'none'")
        # the stylesheet applies (a blocked one would leave the header unstyled)
        display = page.evaluate("getComputedStyle(document.querySelector('header.top')).display")
        assert display == "flex"
        page.goto(f"{console.url}/ui/impact")
        page.click("form#impact-form button")
        page.wait_for_selector("section#impact")
        page.click("form.logout button")
        page.wait_for_url("**/ui/login")
        assert csp_violations(page) == []
    finally:
        page.context.close()


class _Framing(BaseHTTPRequestHandler):
    """A page of the same site (127.0.0.1, another port) that frames the console."""

    target = ""

    def do_GET(self) -> None:
        body = f'<!doctype html><iframe id="framed" src="{self.target}"></iframe>'.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@contextmanager
def framing_site(target: str) -> Iterator[str]:
    handler = type("Framing", (_Framing,), {"target": target})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_page_of_the_same_site_cannot_frame_the_console(page: Page, console: Console) -> None:
    with framing_site(f"{console.url}/ui/manifests") as framer:
        with page.expect_console_message(lambda m: "frame-ancestors" in m.text) as refused:
            page.goto(framer)
        assert "frame-ancestors 'none'" in refused.value.text
        assert "blocked" in refused.value.text
        framed = page.frame_locator("iframe#framed")
        assert framed.locator("header.top").count() == 0
        assert framed.locator("input[name=key]").count() == 0
    assert csp_violations(page)  # the refusal is what the violation check above would see
