"""Every console response carries the security headers (supportgate/console/app.py): a
strict Content-Security-Policy with frame-ancestors 'none', nosniff, a Referrer-Policy. The
browser tests show that the pages work under it; here, that no answer goes without it."""

from __future__ import annotations

import re

from supportgate.console.app import CONTENT_SECURITY_POLICY
from supportgate.package_data import CONSOLE_PACKAGE, package_directory

from ..api import Api
from .support import login

EXPECTED = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}


def test_every_kind_of_console_answer_carries_the_security_headers(sqlite_api: Api) -> None:
    client = sqlite_api.client
    answers = {
        "redirect to login": client.get("/ui/manifests", follow_redirects=False),
        "login form": client.get("/ui/login"),
        "stylesheet": client.get("/ui/static/console.css"),
        "script": client.get("/ui/static/console.js"),
        "unknown page": client.get("/ui/nothing-here"),
        "csrf refusal": client.post("/ui/login", data={"key": "x"}),
    }
    login(sqlite_api, "procurement")
    answers |= {
        "page": client.get("/ui/manifests"),
        "csv": client.get("/ui/audit.csv"),
        "bad filter": client.get("/ui/waivers", params={"active": "maybe"}),
        "role refusal": client.get("/ui/webhooks"),
    }
    assert [a.status_code for a in answers.values()] == [
        303,
        200,
        200,
        200,
        404,
        403,
        200,
        200,
        400,
        403,
    ]
    for what, answer in answers.items():
        for name, value in EXPECTED.items():
            assert answer.headers.get(name) == value, (what, name)
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY
    # script: only the console's own static file (times in the viewer's zone), never inline
    assert "script-src 'self';" in CONTENT_SECURITY_POLICY
    assert "unsafe-eval" not in CONTENT_SECURITY_POLICY
    script = answers["script"]
    assert script.headers["content-type"].split(";")[0] in {
        "text/javascript",
        "application/javascript",
    }  # nosniff runs a script only with a script's type
    # the API keeps its own headers: the policy is the console's
    assert "content-security-policy" not in client.get("/health/live").headers


def test_no_template_has_what_the_policy_refuses() -> None:
    """No inline script, event handler or inline style: the policy would block it (the
    browser tests would then see a violation; this names the template). A script is a static
    file of the console's, loaded by `src`."""
    refused = re.compile(
        r"<script(?![^>]*\ssrc=\"\{\{ ui \}\}/static/[a-z]+\.js\")|<style|\son[a-z]+\s*="
        r"|\sstyle\s*=|javascript:",
        re.I,
    )
    templates = sorted(package_directory(CONSOLE_PACKAGE, "templates").glob("*.j2"))
    assert templates
    for template in templates:
        found = refused.search(template.read_text())
        assert found is None, (template.name, found and found.group(0))
