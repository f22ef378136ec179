"""What procurement asks the console, in a real browser (issue 23 part 8): the fleet on a
date manifest by manifest with verdict and reasons (page and CSV); the fleet diff's cause the
decision that turned the verdict; alerts newest first; a pool's deployments with their models
and verdicts; the matrix page's "from source" cell whole; OSCAL telling warnings from violated
rules; rule ids linked to their rule on the Rules page."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page

from supportgate.fleet.report import MANIFEST_CSV_COLUMNS

from .browser import Console
from .seed import NEW_VERSION

pytestmark = pytest.mark.browser


def api(console: Console, path: str, **params: str) -> Any:
    headers = {"Authorization": f"Bearer {console.keys['admin']}"}
    response = httpx.get(console.url + path, params=params, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def tracked(console: Console) -> dict[str, dict[str, Any]]:
    """name -> the tracked manifest (GET /v1/manifests)."""
    return {m["name"]: m for m in api(console, "/v1/manifests", limit="500")["items"]}


def test_the_fleet_on_a_date_lists_every_manifest_with_verdict_and_reasons(
    page: Page, console: Console
) -> None:
    now = tracked(console)
    page.goto(f"{console.url}/ui/fleet")
    rows = page.locator("table#fleet-manifests tbody tr")
    assert rows.count() == len(now)
    for row in rows.all():
        name = row.locator("td:nth-child(2)").inner_text()
        decision = now[name]["latest_decision"]
        assert row.locator("td:nth-child(4)").inner_text() == decision["verdict"]
        reasons = row.locator("td.why").inner_text()
        for violation in decision["violations"]:
            assert violation["rule"] in reasons
            assert violation["message"] in reasons

    with page.expect_download() as download:
        page.click("a#manifests-csv")
    reader = csv.DictReader(io.StringIO(download.value.path().read_text()))
    lines = list(reader)
    assert tuple(reader.fieldnames or ()) == MANIFEST_CSV_COLUMNS
    assert {line["name"]: line["verdict"] for line in lines} == {
        name: m["latest_decision"]["verdict"] for name, m in now.items()
    }
    for line in lines:
        for violation in now[line["name"]]["latest_decision"]["violations"]:
            assert f"{violation['rule']} ({violation['severity']}): " in line["reasons"]


def test_the_fleet_diff_names_the_decision_that_turned_the_verdict(
    page: Page, console: Console
) -> None:
    # h100-pool-a: experimental when posted, supported by the synced matrix, then posted
    # again unchanged (submission, still supported): the change is the matrix's.
    history = api(console, "/v1/manifests/HardwareManifest/h100-pool-a/history")["items"]
    assert [d["cause"] for d in history[:2]] == ["submission", "matrix"]
    page.goto(f"{console.url}/ui/fleet")
    rows = page.locator("table#fleet-changes tbody tr", has_text="HardwareManifest")
    row = rows.filter(has_text="h100-pool-a").inner_text()
    assert "not tracked → supported" in row
    assert f"matrix, matrix {NEW_VERSION}" in row
    assert "submission" not in row


def test_alerts_come_newest_first(page: Page, console: Console) -> None:
    oldest_first = [a["decision_id"] for a in api(console, "/v1/alerts")["items"]]
    assert len(oldest_first) >= 3
    page.goto(f"{console.url}/ui/alerts")
    shown = [
        link.get_attribute("title") for link in page.locator("table#alerts tbody tr a.id").all()
    ]
    assert shown == oldest_first[::-1]


def test_a_pools_page_lists_its_deployments_with_models_and_verdicts(
    page: Page, console: Console
) -> None:
    now = tracked(console)
    on_pool = {
        name: m
        for name, m in now.items()
        if m["kind"] == "DeploymentManifest"
        and m["content"]["spec"]["hardware"].get("ref") == "h100-pool-a"
    }
    assert len(on_pool) >= 2
    page.goto(f"{console.url}/ui/manifests/HardwareManifest/h100-pool-a")
    rows = page.locator("table#deployments tbody tr")
    assert sorted(rows.locator("td:nth-child(1)").all_inner_texts()) == sorted(on_pool)
    for row in rows.all():
        name = row.locator("td:nth-child(1)").inner_text()
        model = on_pool[name]["content"]["spec"]["model"]["name"]
        assert model in row.locator("td:nth-child(3)").inner_text()
        assert (
            row.locator("td:nth-child(5)").inner_text()
            == (on_pool[name]["latest_decision"]["verdict"])
        )
    row = rows.first
    row.locator("td:nth-child(1) a").click()
    page.wait_for_url("**/ui/manifests/DeploymentManifest/*")


def test_the_matrix_pages_source_cell_is_whole(page: Page, console: Console) -> None:
    source = api(console, "/v1/matrix/source")
    page.goto(f"{console.url}/ui/matrix")
    row = page.locator("table#versions tbody tr", has_text=NEW_VERSION)
    cell = row.locator("td:nth-child(6) code")
    assert cell.inner_text() == source["revision"][:12]
    title = cell.get_attribute("title") or ""
    assert re.fullmatch(r".+, read \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", title), title
    assert row.locator("td").count() == 6  # nothing spilled out of the attribute


def test_oscal_tells_warnings_from_violated_rules(page: Page, console: Console) -> None:
    page.goto(f"{console.url}/ui/fleet")
    with page.expect_download() as download:
        page.click("a#oscal-to")
    document = json.loads(download.value.path().read_text())
    [result] = document["assessment-results"]["results"]
    severities = {
        finding["title"]: {p["name"]: p["value"] for p in finding["props"]}["severity"]
        for finding in result["findings"]
    }
    assert {"deny", "warn"} <= set(severities.values())
    for title, severity in severities.items():
        assert ("warning on" in title) is (severity == "warn"), title
        assert ("violated" in title) is (severity != "warn"), title


def test_a_rule_id_links_to_its_rule(page: Page, console: Console) -> None:
    page.goto(f"{console.url}/ui/manifests?verdict=rejected")
    link = page.locator("table a.rule").first
    rule = link.inner_text()
    link.click()
    page.wait_for_url(f"**/ui/rules#rule-{rule}")
    target = page.locator("tr:target")
    assert target.locator("td:first-child").inner_text() == rule
