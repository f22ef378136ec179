"""The console's rules page: GET /v1/policy's rules, built-in and organisation, with their
source; the rule filter offers the organisation's rules too (docs/organisation-policies.md)."""

from __future__ import annotations

import re

from ..api import Api
from .support import login

_ROW = re.compile(
    r'<tr id="rule-([^"]+)">\s*<td><code>[^<]+</code></td>\s*<td>(\w+)</td>\s*<td>([\w.-]+)</td>'
)


def test_the_rules_page_lists_every_rule_with_its_source(acme_api: Api) -> None:
    login(acme_api, "procurement")
    page = acme_api.client.get("/ui/rules")
    assert page.status_code == 200, page.text
    shown = {rule: (severity, source) for rule, severity, source in _ROW.findall(page.text)}
    document = acme_api.client.get("/v1/policy", headers=acme_api.headers("procurement")).json()
    assert shown == {rule["id"]: (rule["severity"], rule["source"]) for rule in document["rules"]}
    assert shown["org.acme.rtx-production"] == ("deny", "acme")
    assert shown["org.acme.quantization"] == ("warn", "acme")
    assert ">acme<" in page.text  # the bundles table
    assert 'href="/ui/rules"' in page.text  # in the menu
    manifests = acme_api.client.get("/ui/manifests")
    assert 'value="org.acme.decode-replicas"' in manifests.text  # the rule filter
