"""Where reports link a rule's documentation: the docs URL (SUPPORTGATE_DOCS_URL), the rules
page (docs/rules.md, written by `rules_page`) and its anchors."""

from __future__ import annotations

import re
from collections.abc import Mapping

DOCS_URL_ENV = "SUPPORTGATE_DOCS_URL"
DEFAULT_DOCS_URL = "https://github.com/supportgate/supportgate/blob/main/docs/"
RULES_PAGE = "rules.md"
REPORTS_PAGE = "reports.md"
_NOT_ANCHOR = re.compile(r"[^a-z0-9_-]+")


def docs_url(environ: Mapping[str, str]) -> str:
    url = environ.get(DOCS_URL_ENV) or DEFAULT_DOCS_URL
    return url if url.endswith("/") else url + "/"


def rule_anchor(rule_id: str) -> str:
    """The anchor of a rule's section in docs/rules.md: `port.production` -> `port-production`."""
    return _NOT_ANCHOR.sub("-", rule_id.lower()).strip("-")


def rule_help_uri(base: str, rule_id: str) -> str:
    return f"{base}{RULES_PAGE}#{rule_anchor(rule_id)}"
