"""The console's pages over real data: filters, the timeline and decision diff, the audit
search with cursor paging and CSV, matrix version diffs, impact, alerts, webhooks, waivers."""

from __future__ import annotations

import csv
import html
import io
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from supportgate.audit.csv_export import CSV_COLUMNS
from supportgate.console.session import CSRF_FIELD

from ..api import Api
from ..api_support import created, deployment, example, hardware, post_examples, rows
from ..examples import expected
from .support import alert_text, csrf, login

_LINK = re.compile(r'href="/ui/manifests/(\w+)/([a-z0-9-]+)"')
_ROW_LINKS = re.compile(r"<tbody>(.*?)</tbody>", re.S)
_NEXT = re.compile(r'<a class="next" href="\?([^"]+)"')


def seed(api: Api) -> None:
    post_examples(api)


def listed(response: httpx.Response) -> list[tuple[str, str]]:
    """(kind, name) of every manifest link in the page's first table body, in order."""
    assert response.status_code == 200, response.text
    body = _ROW_LINKS.search(response.text)
    return [] if body is None else _LINK.findall(body.group(1))


def api_get(api: Api, path: str, **params: str) -> Any:  # the JSON body
    response = api.client.get(path, params=params, headers=api.headers("admin"))
    assert response.status_code == 200, response.text
    return response.json()


def publish_with_sm90(api: Api, version: str = "2026.12.1") -> dict[str, Any]:
    """Publish the current matrix plus H100 (sm90) as a platform, 30 days of evidence."""
    document: dict[str, Any] = api_get(api, "/v1/matrix")["document"]
    document["version"] = version
    document["evidence_max_age_days"] = 30
    document.pop("effective_from", None)
    document["engines"]["deepinfer"]["platforms"].append(
        {"vendor": "nvidia", "arch": "sm90", "toolkit": {"name": "cuda", "min": "12.4"}}
    )
    response = api.client.post("/v1/matrix", json=document, headers=api.headers("admin"))
    assert response.status_code == 201, response.text
    return document


def test_tracked_manifests_filter_by_kind_verdict_owner_and_rule(api: Api) -> None:
    seed(api)
    login(api)
    everything = listed(api.client.get("/ui/manifests"))
    assert len(everything) == len(expected().decisions)
    for params in (
        {"kind": "HardwareManifest"},
        {"verdict": "rejected"},
        {"owner": "ml-platform"},
        {"kind": "DeploymentManifest", "verdict": "experimental"},
    ):
        via_api = [(m["kind"], m["name"]) for m in api_get(api, "/v1/manifests", **params)["items"]]
        assert listed(api.client.get("/ui/manifests", params=params)) == via_api, params
        assert 0 < len(via_api) < len(everything)
    consumer = listed(api.client.get("/ui/manifests", params={"rule": "port.consumer-card"}))
    assert sorted(consumer) == expected().showing("port.consumer-card")
    assert ("HardwareManifest", "rtx4090-workstation") in consumer
    production = listed(
        api.client.get(
            "/ui/manifests", params={"rule": "port.production", "kind": "", "owner": " "}
        )
    )
    assert production == expected().showing("port.production")
    assert production == [("DeploymentManifest", "v41-flash-h100-prod")]
    assert listed(api.client.get("/ui/manifests", params={"rule": "no.such-rule"})) == []
    for params, field in (
        ({"verdict": "fine"}, "verdict:"),
        ({"owner": "a\x00b"}, "owner:"),  # PostgreSQL refuses NUL: a 400, not a 503
        ({"cursor": "not-a-cursor"}, "cursor:"),
    ):
        refused = api.client.get("/ui/manifests", params=params)
        assert refused.status_code == 400, params
        assert alert_text(refused).startswith(field)


def test_a_manifest_page_charts_its_timeline_and_diffs_two_decisions(sqlite_api: Api) -> None:
    api = sqlite_api
    first = created(api, hardware("pool-a"))
    publish_with_sm90(api)
    # The publication's sweep records pool-a's second decision (a POST before the sweep reached
    # pool-a would record it instead, and the sweep then none: the test waits for the sweep).
    assert api.runtime.reevaluation.wait_idle()
    second, _ = api_get(api, "/v1/manifests/HardwareManifest/pool-a/history")["items"]
    assert (first["verdict"], second["verdict"]) == ("experimental", "supported")
    login(api)

    page = api.client.get("/ui/manifests/HardwareManifest/pool-a")
    assert page.status_code == 200
    svg = re.search(r"<svg id=\"timeline\".*?</svg>", page.text, re.S)
    assert svg is not None
    points = re.findall(r'<circle class="point (\w+)"', svg.group(0))
    assert points == ["experimental", "supported"]  # oldest first, left to right
    markers = re.findall(r"matrix ([\w.]+)</text>", svg.group(0))
    assert markers == [first["matrix_version"], "2026.12.1"]

    diff = page.text[page.text.index('id="diff"') :]
    assert "verdict:" in diff
    rule_cell = r'<td><a class="rule" href="/ui/rules#rule-support.platform"><code>support.platform'
    assert re.search(r'<tr class="removed">\s*<td>removed</td>' + rule_cell, diff)
    assert first["id"] in diff
    assert second["id"] in diff
    # Either order: the older decision is "before".
    swapped = api.client.get(
        "/ui/manifests/HardwareManifest/pool-a", params={"a": second["id"], "b": first["id"]}
    )
    before = swapped.text.index(first["id"], swapped.text.index('id="diff"'))
    after = swapped.text.index(second["id"], swapped.text.index('id="diff"'))
    assert before < after
    # each decision listed with its violations: rule, severity, message, path
    for violation in first["violations"]:
        for value in violation.values():
            assert html.escape(str(value)) in page.text
    other = created(api, hardware("pool-b"))
    for params, named in (
        ({"a": first["id"], "b": "nothing"}, "b:"),
        ({"a": other["id"], "b": second["id"]}, "a:"),
        ({"a": first["id"]}, "b:"),
    ):
        refused = api.client.get("/ui/manifests/HardwareManifest/pool-a", params=params)
        assert refused.status_code == 400
        assert alert_text(refused).startswith(named)


def test_the_audit_search_filters_pages_with_cursors_and_exports_csv(api: Api) -> None:
    seed(api)
    for _ in range(52):
        created(api, hardware("pool-a"))
    login(api)
    first = api.client.get("/ui/audit")
    assert len(listed(first)) == 50
    more = _NEXT.search(first.text)
    assert more is not None
    second = api.client.get("/ui/audit?" + html.unescape(more.group(1)))
    assert len(listed(second)) == len(expected().decisions) + 52 - 50
    assert _NEXT.search(second.text) is None

    since = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    until = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    version = api_get(api, "/v1/matrix")["version"]
    for params in (
        {"kind": "DeploymentManifest"},
        {"name": "pool-a", "verdict": "experimental"},
        {"rule": "service.external"},
        {"since": since, "until": until, "matrix_version": version, "verdict": "rejected"},
    ):
        every = [
            (d["manifest"]["kind"], d["manifest"]["name"])
            for d in api_get(api, "/v1/audit", limit="500", **params)["items"]
        ]
        assert every
        page = api.client.get("/ui/audit", params=params)
        assert listed(page) == every[:50], params
        export = re.search(r'<a class="csv" href="([^"]+)"', page.text)
        assert export is not None
        response = api.client.get(html.unescape(export.group(1)))
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/csv")
        assert response.headers["content-disposition"].startswith("attachment;")
        table = list(csv.reader(io.StringIO(response.text)))
        assert tuple(table[0]) == CSV_COLUMNS
        assert [(r[2], r[3]) for r in table[1:]] == every
    refused = api.client.get("/ui/audit", params={"since": "yesterday"})
    assert refused.status_code == 400
    assert alert_text(refused).startswith("since:")
    assert api.client.get("/ui/audit.csv", params={"until": "soon"}).status_code == 400


def test_the_matrix_page_diffs_two_versions_structurally(sqlite_api: Api) -> None:
    api = sqlite_api
    login(api)
    page = api.client.get("/ui/matrix")
    assert page.status_code == 200
    assert 'id="matrix-diff"' not in page.text  # one version: nothing to compare
    # the version in effect: its platforms with their tier, alternatives and catalogue
    assert "<td>nvidia sm100</td><td>cuda 13.0 &lt; 14</td><td>official</td>" in page.text
    assert "<tr><td>vllm</td><td>nvidia sm90</td><td>—</td><td>not stated</td>" in page.text
    assert "<td><code>*RTX*4090*</code></td><td>sm89</td><td>yes</td>" in page.text
    old = api_get(api, "/v1/matrix")["version"]
    publish_with_sm90(api)
    page = api.client.get("/ui/matrix")  # the two newest by default
    changes = re.findall(
        r'<tr class="(\w+)"><td>([^<]*)</td><td><code>([^<]*)</code></td><td>\w+</td>'
        r"<td>([^<]*)</td><td>([^<]*)</td></tr>",
        page.text,
    )
    found = {(c[0], c[1], html.unescape(c[2])) for c in changes}
    assert ("changed", "version", "—") in found
    assert ("changed", "evidence_max_age_days", "—") in found
    assert ("added", "engine deepinfer", "platforms[nvidia/sm90]") in found
    assert ("removed", "effective_from", "—") in found or "effective_from" not in str(found)
    explicit = api.client.get("/ui/matrix", params={"old": "2026.12.1", "new": old})
    assert ("removed", "engine deepinfer", "platforms[nvidia/sm90]") in {
        (c[0], c[1], html.unescape(c[2]))
        for c in re.findall(
            r'<tr class="(\w+)"><td>([^<]*)</td><td><code>([^<]*)</code></td>', explicit.text
        )
    }
    refused = api.client.get("/ui/matrix", params={"old": "0.0.0", "new": old})
    assert refused.status_code == 400
    assert alert_text(refused).startswith("old:")


def test_impact_analysis_of_a_pasted_matrix_records_nothing(sqlite_api: Api) -> None:
    api = sqlite_api
    seed(api)
    token = login(api)
    form = api.client.get("/ui/impact")
    textarea = re.search(r"<textarea[^>]*>(.*?)</textarea>", form.text, re.S)
    assert textarea is not None
    current = html.unescape(textarea.group(1))
    assert "deepinfer" in current
    proposal = current.replace(
        "- vendor: ascend",
        "- vendor: nvidia\n      arch: sm90\n"
        "      toolkit: {name: cuda, min: '12.4'}\n    - vendor: ascend",
        1,  # the engine's platform, not the catalogue's Ascend families further down
    )
    before = rows(api)
    response = api.client.post("/ui/impact", data={"matrix": proposal, CSRF_FIELD: token})
    assert response.status_code == 200, response.text
    changed = listed(response)
    assert ("HardwareManifest", "h100-pool-a") in changed
    assert "would change verdict" in response.text
    assert rows(api) == before
    bad = api.client.post(
        "/ui/impact", data={"matrix": "version: x\nengines: 3\n", CSRF_FIELD: token}
    )
    assert bad.status_code == 400
    assert "engines" in alert_text(bad)
    assert "engines: 3" in html.unescape(bad.text)  # the text is kept for fixing


def test_alerts_webhooks_and_waivers_pages(sqlite_api: Api) -> None:
    api = sqlite_api
    created(api, hardware("pool-a"))
    publish_with_sm90(api)
    created(api, hardware("pool-a"))  # experimental -> supported: an alert
    hook = api.client.post(
        "/v1/webhooks",
        json={"url": "http://127.0.0.1:9/hook", "description": "procurement <inbox>"},
        headers=api.headers("admin"),
    )
    assert hook.status_code == 201, hook.text
    doc = example("dep-h100-production.yaml")
    assert (
        api.client.post("/v1/evaluations", json=doc, headers=api.headers("ci")).status_code == 201
    )
    expires = (datetime.now(UTC) + timedelta(days=3)).isoformat()
    waiver = api.client.post(
        "/v1/waivers",
        json={
            "rule": "port.production",
            "kind": "DeploymentManifest",
            "name": doc["metadata"]["name"],
            "justification": "trial until the <b>parity</b> run",
            "expires_at": expires,
        },
        headers=api.headers("admin"),
    )
    assert waiver.status_code == 201, waiver.text
    login(api)

    alerts = api.client.get("/ui/alerts")
    assert ("HardwareManifest", "pool-a") in listed(alerts)
    assert re.search(r"experimental</span> → <span class=\"verdict supported\"", alerts.text)

    assert api.client.get("/ui/webhooks").status_code == 403  # as the API: admins only
    login(api, "admin")
    hooks = api.client.get("/ui/webhooks")
    assert hooks.status_code == 200
    assert "http://127.0.0.1:9/hook" in hooks.text
    assert "procurement &lt;inbox&gt;" in hooks.text

    waivers = api.client.get("/ui/waivers", params={"active": "true"})
    assert ("DeploymentManifest", doc["metadata"]["name"]) in listed(waivers)
    assert "trial until the &lt;b&gt;parity&lt;/b&gt; run" in waivers.text
    assert "in force</span>, 2 d" in waivers.text
    assert listed(api.client.get("/ui/waivers", params={"active": "false"})) == []


def test_everything_shown_is_escaped(sqlite_api: Api) -> None:
    api = sqlite_api
    doc = hardware("pool-x")
    doc["metadata"]["owner"] = '<script>alert("owned")</script>'
    created(api, doc)
    login(api)
    for url in ("/ui/manifests", "/ui/manifests/HardwareManifest/pool-x"):
        page = api.client.get(url)
        assert "<script>" not in page.text
        assert "&lt;script&gt;alert(&#34;owned&#34;)&lt;/script&gt;" in page.text
    page = api.client.get("/ui/audit", params={"name": '"><script>x</script>'})
    assert "<script>x" not in page.text
    assert csrf(api, "/ui/manifests")


def test_a_pools_page_lists_the_deployments_on_it_with_models_and_verdicts(api: Api) -> None:
    created(api, hardware("pool-a"))
    created(api, hardware("pool-b"))
    created(api, deployment("trial-a", ref="pool-a"))
    created(api, deployment("trial-b", ref="pool-b"))
    login(api)
    page = api.client.get("/ui/manifests/HardwareManifest/pool-a")
    assert page.status_code == 200, page.text
    table = page.text[page.text.index('id="deployments"') :]
    table = table[: table.index("</table>")]
    assert _LINK.findall(table) == [("DeploymentManifest", "trial-a")]
    assert deployment()["spec"]["model"]["name"] in table
    assert 'class="verdict experimental"' in table
    alone = api.client.get("/ui/manifests/HardwareManifest/pool-c")
    assert alone.status_code == 404
    created(api, hardware("pool-c"))
    empty = api.client.get("/ui/manifests/HardwareManifest/pool-c")
    assert "No tracked deployment names this pool" in empty.text
    on_deployment = api.client.get("/ui/manifests/DeploymentManifest/trial-a")
    assert 'id="deployments"' not in on_deployment.text
