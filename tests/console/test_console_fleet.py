"""The console's "fleet on a date" page on a FakeClock: the fleet at the end of two days, and
each manifest whose verdict changed between them with why (rule and message); its CSV; bad
dates named."""

from __future__ import annotations

import csv
import html
import io
import re
from datetime import UTC, date, datetime, time, timedelta

from trestle.oscal.assessment_results import Model

from supportgate.fleet.report import CSV_COLUMNS

from ..api import Api
from ..api_support import created, deployment, hardware
from ..clock import FakeClock
from .support import alert_text, login
from .test_console_pages import publish_with_sm90

_ROW = re.compile(
    r"<tr>\s*<td>(\w+)</td>\s*<td>(?:<(?:a|span) [^>]*>)?([a-z0-9-]+)(?:</(?:a|span)>)?</td>"
    r"(.*?)</tr>",
    re.S,
)


def changes(page: str) -> dict[str, str]:
    """name -> the text of its row in the changes table (tags dropped, spaces squeezed)."""
    table = page[page.index('id="fleet-changes"') :]
    table = table[: table.index("</table>")]
    return {
        name: " ".join(html.unescape(re.sub(r"<[^>]+>", " ", rest)).split())
        for _, name, rest in _ROW.findall(table)
    }


def test_the_fleet_page_compares_two_days_and_says_why(clocked_api: Api, clock: FakeClock) -> None:
    api = clocked_api
    first_day = clock.now().date()
    created(api, hardware("pool-a"))
    created(api, hardware("pool-b"))
    created(api, deployment("trial-a", ref="pool-a"))
    clock.advance(timedelta(days=2))
    publish_with_sm90(api)  # pool-a and pool-b: experimental -> supported
    assert api.runtime.reevaluation.wait_idle()
    api.client.delete("/v1/manifests/HardwareManifest/pool-b", headers=api.headers("admin"))
    consumer_card = {**hardware()["spec"]["accelerator"], "arch": "sm89"}
    created(api, hardware("pool-c", accelerator=consumer_card))
    login(api)

    menu = api.client.get("/ui/fleet")
    assert menu.status_code == 200, menu.text
    assert 'href="/ui/fleet"' in menu.text
    page = api.client.get("/ui/fleet", params={"from": first_day.isoformat()})
    assert page.status_code == 200, page.text
    rows = changes(page.text)
    assert set(rows) == {"trial-a", "pool-a", "pool-b", "pool-c"}
    assert "experimental → supported" in rows["pool-a"]
    why = "removed support.platform : platform nvidia sm90 (H100-SXM5-80GB) is not among"
    assert why in rows["pool-a"]
    assert "matrix, matrix 2026.12.1" in rows["pool-a"]
    assert "experimental → not tracked" in rows["pool-b"]
    assert "no longer tracked" in rows["pool-b"]
    assert "not tracked →" in rows["pool-c"]
    assert "tracked with port.consumer-card" in rows["pool-c"]
    summary = page.text[page.text.index('id="fleet-summary"') :]
    assert "2026.11.1" in summary.split("</tr>")[1]  # the earlier day: the default matrix
    assert "2026.12.1" in summary.split("</tr>")[2]

    day_one = first_day.isoformat()
    same = api.client.get("/ui/fleet", params={"from": day_one, "to": day_one})
    assert "No manifest changed verdict" in same.text

    _day_one_exports(api, page.text, first_day)


def _day_one_exports(api: Api, page: str, first_day: date) -> None:
    """The page's links to the earlier day's report as CSV and as OSCAL."""
    export = re.search(r'<a class="csv" id="csv-from" href="([^"]+)"', page)
    assert export is not None
    response = api.client.get(html.unescape(export.group(1)))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    table = list(csv.reader(io.StringIO(response.text)))
    assert tuple(table[0]) == CSV_COLUMNS
    assert table[1][:6] == ["fleet", "", "3", "0", "3", "0"]  # three experimental, day one

    oscal = re.search(r'<a class="oscal" id="oscal-from" href="([^"]+)"', page)
    assert oscal is not None
    response = api.client.get(html.unescape(oscal.group(1)))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    results = Model.model_validate_json(response.text).assessment_results
    (result,) = results.results
    assert len(result.observations or ()) == 3  # day one: the three first manifests
    same_day = api.runtime.oscal.document(datetime.combine(first_day, time.max, UTC))
    assert response.content == same_day  # what GET /v1/reports/oscal gives for that time


def test_bad_days_are_named(clocked_api: Api, clock: FakeClock) -> None:
    api = clocked_api
    login(api)
    tomorrow = (clock.now() + timedelta(days=1)).date().isoformat()
    today = clock.now().date().isoformat()
    for params, field in (
        ({"from": "yesterday"}, "from:"),
        ({"to": "2026-02-30"}, "to:"),
        ({"to": tomorrow}, "to:"),
        ({"from": today, "to": "2020-01-01"}, "from:"),
    ):
        refused = api.client.get("/ui/fleet", params=params)
        assert refused.status_code == 400, params
        assert alert_text(refused).startswith(field), params
    assert api.client.get("/ui/fleet.csv", params={"day": "soon"}).status_code == 400
    assert api.client.get("/ui/fleet.oscal.json", params={"day": "soon"}).status_code == 400


def test_the_cause_is_the_decision_that_changed_the_verdict(
    clocked_api: Api, clock: FakeClock
) -> None:
    """A later decision that keeps the verdict (the pool posted again, unchanged) does not
    take the credit: the change is the matrix's, as its alert says."""
    api = clocked_api
    first_day = clock.now().date()
    created(api, hardware("pool-a"))
    clock.advance(timedelta(days=2))
    publish_with_sm90(api)  # experimental -> supported, cause matrix
    assert api.runtime.reevaluation.wait_idle()
    again = created(api, hardware("pool-a"))  # the same content: supported, cause submission
    assert (again["verdict"], again["cause"]) == ("supported", "submission")
    login(api)
    page = api.client.get("/ui/fleet", params={"from": first_day.isoformat()})
    row = changes(page.text)["pool-a"]
    assert "experimental → supported" in row
    assert "matrix, matrix 2026.12.1" in row, row
    assert "submission" not in row, row


def test_the_fleet_on_a_date_lists_every_manifest_with_its_verdict_and_reasons(
    clocked_api: Api, clock: FakeClock
) -> None:
    api = clocked_api
    first_day = clock.now().date().isoformat()
    created(api, hardware("pool-a"))
    created(api, deployment("trial-a", ref="pool-a"))
    clock.advance(timedelta(days=2))
    publish_with_sm90(api)  # both supported now; on day one both experimental
    assert api.runtime.reevaluation.wait_idle()
    login(api)

    page = api.client.get("/ui/fleet", params={"from": first_day, "to": first_day})
    assert page.status_code == 200, page.text
    table = page.text[page.text.index('id="fleet-manifests"') :]
    table = table[: table.index("</table>")]
    listed = {name: rest for _, name, rest in _ROW.findall(table)}
    assert set(listed) == {"pool-a", "trial-a"}
    assert "experimental" in listed["pool-a"]
    assert 'href="/ui/rules#rule-support.platform"' in listed["pool-a"]
    assert "is not among the platforms deepinfer lists" in html.unescape(listed["pool-a"])

    export = api.client.get("/ui/fleet.manifests.csv", params={"day": first_day})
    assert export.status_code == 200
    assert export.headers["content-type"].startswith("text/csv")
    assert f"supportgate-fleet-manifests-{first_day}.csv" in export.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(export.text)))
    by_name = {row["name"]: row for row in rows}
    assert set(by_name) == {"pool-a", "trial-a"}
    assert by_name["pool-a"]["verdict"] == "experimental"
    assert "support.platform" in by_name["pool-a"]["rules"].split()
    assert "support.platform (warn): platform nvidia sm90" in by_name["pool-a"]["reasons"]
    assert by_name["trial-a"]["matrix_version"] == "2026.11.1"
    today = api.client.get("/ui/fleet.manifests.csv")
    assert {row["verdict"] for row in csv.DictReader(io.StringIO(today.text))} == {"supported"}
