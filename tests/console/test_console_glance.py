"""The console answers at a glance: why each verdict changed (Alerts, Impact), alerts filtered
by kind, owner, cause and matrix version, times to the second (UTC on the server, the
viewer's zone by the static script), placeholders that read as hints."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest

from supportgate.console.rendering import time_element, utc_text
from supportgate.console.session import CSRF_FIELD
from supportgate.manifests.decision import Decision, Violation
from supportgate.manifests.reasons import verdict_reason

from ..api import Api
from ..api_support import created, deployment, hardware, post_examples
from ..waiting import wait_until
from .support import alert_text, login
from .test_console_pages import listed, publish_with_sm90

LOST = "\N{MINUS SIGN}"  # the sign of a violation no longer there
_WHY = re.compile(r'<td class="why">(.*?)</td>', re.S)
_TIME = re.compile(
    r'<time datetime="(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)" title="([^"]+)">([^<]+)</time>'
)


def owned(doc: dict[str, Any], owner: str) -> dict[str, Any]:
    doc["metadata"]["owner"] = owner
    return doc


def whys(text: str) -> list[str]:
    """Each table row's reason, as text (tags dropped, entities read)."""
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", w)).split()) for w in _WHY.findall(text)]


def alerts_fleet(api: Api) -> None:
    """Alerts of two owners, two kinds, causes matrix and submission, two matrix versions."""
    created(api, owned(hardware("pool-a"), "team-a"))
    created(api, owned(hardware("pool-b"), "team-b"))
    created(api, owned(deployment("trial-b", ref="pool-b"), "team-b"))
    publish_with_sm90(api)  # all three experimental -> supported (cause matrix)

    def three() -> bool:
        items = api.client.get("/v1/alerts", headers=api.headers("procurement")).json()["items"]
        return len(items) == 3

    wait_until(three, "three alerts")
    created(api, owned(hardware("pool-a", python="3.10.4"), "team-a"))  # -> rejected


def test_alerts_show_why_each_verdict_changed_and_filter(api: Api) -> None:
    alerts_fleet(api)
    login(api)
    page = api.client.get("/ui/alerts")
    shown_first = listed(page)  # newest first
    assert shown_first[0] == ("HardwareManifest", "pool-a")
    assert sorted(shown_first[1:]) == [
        ("DeploymentManifest", "trial-b"),
        ("HardwareManifest", "pool-a"),
        ("HardwareManifest", "pool-b"),
    ]
    reasons = whys(page.text)
    assert len(reasons) == 4
    # the old Python: a deny gained, with its message
    assert reasons[0].startswith("+ host.python deny")
    # listed sm90 lifts the platform warning: lost, with its message
    platform = f"{LOST} support.platform warn platform nvidia sm90 (H100-SXM5-80GB) is not among"
    assert all(platform in r for r in reasons[1:]), reasons
    assert "3.10.4" in reasons[0]

    def shown(**params: str) -> list[tuple[str, str]]:
        return listed(api.client.get("/ui/alerts", params=params))

    assert shown(kind="DeploymentManifest") == [("DeploymentManifest", "trial-b")]
    assert sorted(shown(owner="team-a")) == [("HardwareManifest", "pool-a")] * 2
    assert shown(cause="submission") == [("HardwareManifest", "pool-a")]
    assert len(shown(matrix_version="2026.12.1")) == 4
    assert shown(matrix_version="2026.11.1") == []
    assert shown(owner="team-b", kind="HardwareManifest") == [("HardwareManifest", "pool-b")]
    # the filters hold across pages (and show in the form)
    filtered = api.client.get("/ui/alerts", params={"owner": "team-b", "cause": "matrix"})
    assert 'name="owner" value="team-b"' in filtered.text
    assert '<option value="matrix" selected>' in filtered.text
    assert '<option value="2026.12.1">' in filtered.text  # published versions to choose from

    for param, value in (("cause", "whenever"), ("kind", "Pod"), ("since", "yesterday")):
        refused = api.client.get("/ui/alerts", params={param: value})
        assert refused.status_code == 400, (param, refused.text)
        assert alert_text(refused).startswith(f"{param}:")


def test_impact_shows_the_messages_of_the_rules_each_change_gains_or_loses(
    sqlite_api: Api,
) -> None:
    api = sqlite_api
    post_examples(api)
    token = login(api)
    form = api.client.get("/ui/impact")
    textarea = re.search(r"<textarea[^>]*>(.*?)</textarea>", form.text, re.S)
    assert textarea is not None
    proposal = html.unescape(textarea.group(1)).replace(
        "- vendor: ascend",
        "- vendor: nvidia\n      arch: sm90\n"
        "      toolkit: {name: cuda, min: '12.4'}\n    - vendor: ascend",
        1,  # the engine's platform, not the catalogue's Ascend families further down
    )
    response = api.client.post("/ui/impact", data={"matrix": proposal, CSRF_FIELD: token})
    assert response.status_code == 200, response.text
    changed, reasons = listed(response), whys(response.text)
    assert len(changed) == len(reasons) > 0
    pool = reasons[changed.index(("HardwareManifest", "h100-pool-a"))]
    assert pool.startswith(f"{LOST} support.platform warn")
    assert "sm90" in pool  # the message, not the bare rule id


def test_times_are_to_the_second_with_utc_on_hover(sqlite_api: Api) -> None:
    api = sqlite_api
    post_examples(api)
    login(api)
    for path in (
        "/ui/manifests",
        "/ui/audit",
        "/ui/matrix",
        "/ui/manifests/HardwareManifest/h100-pool-a",
    ):
        page = api.client.get(path)
        assert page.status_code == 200, page.text
        times = _TIME.findall(page.text)
        assert times, path
        for iso, title, text in times:
            assert title == text == iso.replace("T", " ").replace("Z", " UTC"), path
        # no time anywhere with a fraction of a second (the UTC text of <option>s, SVG titles)
        assert not re.search(r"\d\d:\d\d:\d\d\.\d", page.text), path
    assert '<script src="/ui/static/console.js" defer></script>' in page.text


def test_placeholders_read_as_hints(sqlite_api: Api) -> None:
    login(sqlite_api)
    for path in ("/ui/manifests", "/ui/audit", "/ui/alerts", "/ui/waivers"):
        page = sqlite_api.client.get(path)
        placeholders = re.findall(r'placeholder="([^"]*)"', page.text)
        assert placeholders, path
        assert all(p.startswith("e.g. ") for p in placeholders), (path, placeholders)


def test_time_element_truncates_to_the_second_in_utc() -> None:
    moment = datetime(2026, 11, 30, 12, 0, 5, 999_999, tzinfo=UTC)
    assert utc_text(moment) == "2026-11-30 12:00:05 UTC"
    assert str(time_element(moment)) == (
        '<time datetime="2026-11-30T12:00:05Z" title="2026-11-30 12:00:05 UTC">'
        "2026-11-30 12:00:05 UTC</time>"
    )
    assert str(time_element(None)) == "—"
    with pytest.raises(ValueError, match="time zone"):
        utc_text(datetime(2026, 11, 30, 12, 0, 5))


def _decision(*violations: tuple[str, str, str]) -> Decision:
    """A decision with these (rule, severity, message) violations; the rest does not matter."""
    return msgspec.convert(
        {
            "id": "d",
            "manifest": {"kind": "HardwareManifest", "name": "pool-a"},
            "verdict": "supported",
            "allowed": True,
            "violations": [
                {"rule": r, "severity": s, "message": m, "path": "$.spec"} for r, s, m in violations
            ],
            "claims": {"builds": "proven", "correct": "proven", "performant": "proven"},
            "checklist": {
                "official_support": True,
                "kernels_and_correctness": "proven",
                "distributed_performance": "proven",
                "service_completeness": "complete",
            },
            "recommendations": [],
            "matrix_version": "2026.11.1",
            "policy_revision": "p",
            "input_digest": "sha256:" + "0" * 64,
            "evaluated_at": "2026-11-30T12:00:00Z",
            "cause": "submission",
        },
        Decision,
    )


def test_a_reason_is_the_violations_gained_and_lost_by_rule_and_severity() -> None:
    before = _decision(("a.rule", "warn", "a warned"), ("b.rule", "deny", "b denied"))
    after = _decision(("a.rule", "deny", "a denied now"), ("c.rule", "warn", "c warned"))
    reason = verdict_reason(before, after)
    assert [(v.rule, v.severity, v.message) for v in reason.gained] == [
        ("a.rule", "deny", "a denied now"),
        ("c.rule", "warn", "c warned"),
    ]
    assert [(v.rule, v.severity) for v in reason.lost] == [("a.rule", "warn"), ("b.rule", "deny")]
    only_deny = verdict_reason(before, after, ("deny",))
    assert [v.rule for v in only_deny.gained] == ["a.rule"]
    assert [v.rule for v in only_deny.lost] == ["b.rule"]
    first = verdict_reason(None, after)
    assert first.lost == ()
    assert isinstance(first.gained[0], Violation)
