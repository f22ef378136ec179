"""docs/rules.md, generated from the policy catalogue (`python -m supportgate.reports.rules_page
--write`). A test fails when the page and the catalogue differ, so it never drifts from the
policies' METADATA and every SARIF `helpUri` finds its section.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.policy import PolicyBundle
from supportgate.policy.catalog import RuleInfo, read_catalog
from supportgate.reports.rules import RULES_PAGE, rule_anchor


def render_rules_page(catalog: Mapping[str, RuleInfo]) -> str:
    rules = [catalog[rule_id] for rule_id in sorted(catalog)]
    lines = [
        "# Rules",
        "",
        "<!-- Generated from the policies' METADATA by "
        "`python -m supportgate.reports.rules_page --write`; do not edit. -->",
        "",
        "Every rule of the built-in policies, as `supportgate check` reports it. A `deny` rule",
        "rejects the manifest (unless a waiver covers it); a `warn` rule never rejects. SARIF",
        "reports link each rule to its section here; [reports.md](reports.md) describes the",
        "report formats.",
        "",
        "| rule | severity | title |",
        "|---|---|---|",
    ]
    lines += [f"| [`{r.id}`](#{rule_anchor(r.id)}) | {r.severity} | {r.title} |" for r in rules]
    for rule in rules:
        lines += [
            "",
            f'<a id="{rule_anchor(rule.id)}"></a>',
            "",
            f"## `{rule.id}`: {rule.title}",
            "",
            f"Severity: `{rule.severity}`. Defined in `policies/{rule.module}`.",
            "",
            rule.description,
            "",
            f"**How to fix:** {rule.remediation}",
        ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="print or write docs/rules.md")
    parser.add_argument("--write", type=Path, nargs="?", const=Path("docs") / RULES_PAGE)
    args = parser.parse_args(argv)
    page = render_rules_page(read_catalog(PolicyBundle.load(DEFAULT_POLICY_DIR).modules))
    if args.write is None:
        sys.stdout.write(page)
    else:
        args.write.write_text(page, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
