"""The console at a glance, in a real browser: Alerts filtered by kind, owner, cause and
matrix version (each filter really narrows, to what GET /v1/alerts answers); why each verdict
changed, with the rule and its message, in Alerts and Impact; times rewritten into the
browser's zone (Chromium run with TZ set) with the UTC time kept on hover; the layout using
the window's width, with names, rule ids and times never wrapped mid-word at 1280 px; and
placeholders that read as hints."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from zoneinfo import ZoneInfo

import httpx
import pytest
import yaml
from playwright.sync_api import Browser, Page

from .browser import CHROMIUM, Console, csp_violations, log_in, watch_console
from .seed import proposed_matrix

pytestmark = pytest.mark.browser

VIEWER_ZONE = "Australia/Eucla"  # +08:45 all year: no daylight saving, not whole hours off UTC


def alerts_api(console: Console, **params: str) -> list[dict[str, object]]:
    headers = {"Authorization": f"Bearer {console.keys['procurement']}"}
    response = httpx.get(f"{console.url}/v1/alerts", params=params, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    items: list[dict[str, object]] = response.json()["items"]
    return items


def shown_decisions(page: Page) -> list[str]:
    """The decision id of each row of the alerts table (its link's title)."""
    return [
        link.get_attribute("title") or ""
        for link in page.locator("table#alerts tbody tr a.id").all()
    ]


def wrapped(page: Page, selector: str) -> list[str]:
    """The texts of the elements matching `selector` that the browser laid out on more than
    one line (an inline box broken across lines has one client rect per line)."""
    found: list[str] = page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)]
            .filter((e) => e.getClientRects().length > 1)
            .map((e) => e.textContent)""",
        selector,
    )
    return found


def test_each_alert_filter_narrows_to_what_the_api_answers(page: Page, console: Console) -> None:
    every = alerts_api(console)
    assert len(every) >= 3
    page.goto(f"{console.url}/ui/alerts")
    assert shown_decisions(page) == [a["decision_id"] for a in every][::-1]  # newest first
    manifest = every[0]["manifest"]
    assert isinstance(manifest, dict)
    owner = "infra" if manifest["kind"] == "HardwareManifest" else "ml-platform"
    filters = [
        ("select", "kind", "DeploymentManifest"),
        ("fill", "owner", owner),
        ("select", "cause", str(every[0]["cause"])),
        ("select", "matrix_version", str(every[0]["matrix_version"])),
    ]
    narrowed = False
    for how, name, value in filters:
        page.goto(f"{console.url}/ui/alerts")
        if how == "select":
            page.select_option(f"form.filters select[name={name}]", value)
        else:
            page.fill(f"form.filters input[name={name}]", value)
        page.click("form.filters button[type=submit]")
        page.wait_for_url(f"**{name}=**")
        wanted = [a["decision_id"] for a in alerts_api(console, **{name: value})][::-1]
        assert shown_decisions(page) == wanted, (name, value)
        narrowed |= 0 < len(wanted) < len(every)
        if name == "kind":
            kinds = page.locator("table#alerts tbody tr td:nth-child(2)").all_inner_texts()
            assert set(kinds) <= {"DeploymentManifest"}
    assert narrowed  # at least one filter kept some alerts and dropped others
    page.goto(f"{console.url}/ui/alerts?owner=no-such-team")
    assert page.locator("table#alerts").count() == 0
    assert "that matches these filters" in page.inner_text("main")


def test_alerts_say_why_with_the_rule_and_its_message(page: Page, console: Console) -> None:
    page.goto(f"{console.url}/ui/alerts")
    rows = page.locator("table#alerts tbody tr")
    assert rows.count() >= 1
    for index in range(rows.count()):
        why = rows.nth(index).locator("td.why")
        entries = why.locator("li")
        assert entries.count() >= 1, rows.nth(index).inner_text()
        first = entries.first
        rule = first.locator("code").inner_text()
        assert "." in rule  # a rule id, such as support.platform
        # the message follows the rule and its severity, and is seen, not only in the markup
        text = first.inner_text()
        assert len(text) > len(rule) + 20, text
        assert first.is_visible()


def test_impact_says_why_with_messages(page: Page, console: Console) -> None:
    page.goto(f"{console.url}/ui/impact")
    proposal = proposed_matrix(yaml.safe_load(page.input_value("textarea#matrix")), "2027.1.1")
    platforms = proposal["engines"]["deepinfer"]["platforms"]
    proposal["engines"]["deepinfer"]["platforms"] = [p for p in platforms if p["arch"] != "sm90"]
    page.fill("textarea#matrix", yaml.safe_dump(proposal, sort_keys=False))
    page.click("form#impact-form button")
    page.wait_for_selector("section#impact")
    pool = page.locator("table#impact-changes tbody tr").filter(
        has=page.get_by_role("link", name="h100-pool-a", exact=True)
    )
    why = pool.locator("td.why li", has_text="support.platform")
    assert why.count() == 1
    assert "is not among the platforms deepinfer lists" in why.inner_text()
    assert why.locator(".sign").inner_text() == "+"  # the proposal would add it back


@pytest.fixture(scope="module")
def zoned_browser(browser: Browser) -> Iterator[Browser]:
    """A second Chromium started with TZ set, as a viewer's machine in that zone runs it."""
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    zoned = browser.browser_type.launch(
        executable_path=str(CHROMIUM),
        headless=True,
        args=args,
        env={**os.environ, "TZ": VIEWER_ZONE},
    )
    try:
        yield zoned
    finally:
        zoned.close()


def test_times_are_in_the_browsers_zone_with_utc_on_hover(
    zoned_browser: Browser, console: Console
) -> None:
    context = zoned_browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        watch_console(page)
        log_in(page, console.url, console.keys["procurement"])
        page.wait_for_url("**/ui/manifests")
        assert page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone") == VIEWER_ZONE
        for path in ("/ui/manifests", "/ui/alerts", "/ui/audit"):
            page.goto(console.url + path)
            times = page.locator("main time[datetime]")
            assert times.count() >= 1, path
            for index in range(min(times.count(), 10)):
                element = times.nth(index)
                stamp = element.get_attribute("datetime") or ""
                moment = datetime.fromisoformat(stamp)
                local = moment.astimezone(ZoneInfo(VIEWER_ZONE)).strftime("%Y-%m-%d %H:%M:%S")
                text = element.inner_text()
                assert text.startswith(local + " "), (path, stamp, text)
                assert "UTC" not in text
                utc = moment.strftime("%Y-%m-%d %H:%M:%S UTC")
                assert element.get_attribute("title") == utc  # the hover
        assert csp_violations(page) == []  # the script is the console's own file
    finally:
        context.close()


def test_without_script_times_read_to_the_second_in_utc(browser: Browser, console: Console) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        log_in(page, console.url, console.keys["procurement"])
        page.wait_for_url("**/ui/manifests")
        first = page.locator("main time[datetime]").first
        assert first.inner_text() == first.get_attribute("title")
        assert first.inner_text().endswith(" UTC")
        assert "." not in first.inner_text()  # no fraction of a second
    finally:
        context.close()


@pytest.mark.parametrize(
    "path",
    [
        "/ui/alerts",
        "/ui/manifests",
        "/ui/audit",
        "/ui/waivers",
        "/ui/manifests/DeploymentManifest/v41-flash-h100-prod",
        "/ui/fleet",
    ],
)
def test_at_1280_px_nothing_wraps_mid_word_and_the_width_is_used(
    page: Page, console: Console, path: str
) -> None:
    page.goto(console.url + path)
    viewport = page.viewport_size
    assert viewport is not None
    assert viewport["width"] == 1280
    assert page.locator("main .name").count() >= 1
    for selector in ("main .name", "main code", "main time", "main .verdict"):
        assert wrapped(page, selector) == [], (path, selector)
    main_width = page.evaluate("document.querySelector('main').getBoundingClientRect().width")
    assert main_width > viewport["width"] - 40, main_width
    # each table fits the window: nothing is pushed off to the right
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, overflow


def test_placeholders_read_as_hints(page: Page, console: Console) -> None:
    page.goto(f"{console.url}/ui/audit")
    name = page.locator("input[name=name]")
    assert (name.get_attribute("placeholder") or "").startswith("e.g. ")
    hint, typed = page.evaluate(
        """() => {
            const input = document.querySelector("input[name=name]");
            return [getComputedStyle(input, "::placeholder").fontStyle,
                    getComputedStyle(input).fontStyle];
        }"""
    )
    assert (hint, typed) == ("italic", "normal")
