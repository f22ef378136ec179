"""The policies read the evaluation time in two places only: waivers and evidence ages.

supportgate/policy/inputs.py relies on this to mark inputs whose decision the time cannot change
(and supportgate/policy/memo.py reuses their decisions). A new use of the time in a policy must
update `time_compared` there, and this list.
"""

from __future__ import annotations

import re

from supportgate.policy import PolicyBundle

TIME_READERS = {
    # module: the rules in it that read the evaluation time
    "supportgate/lib/lib.rego": {"evaluated_at_ns"},
    "supportgate/decision/decision.rego": {"_active_waivers"},
    "supportgate/claims/claims.rego": {"warn", "_stale_cutoff"},
}
_RULE_HEAD = re.compile(r"^([a-z_][a-z0-9_]*)\b")


def _rules_reading_time(text: str) -> set[str]:
    readers: set[str] = set()
    rule = ""
    for line in text.splitlines():
        head = _RULE_HEAD.match(line)
        if head and head.group(1) not in {"package", "import"}:
            rule = head.group(1)
        code = line.split("#", 1)[0]
        if "evaluated_at" in code or "time.now_ns" in code:
            readers.add(rule)
    return readers


def test_only_waivers_and_evidence_ages_read_the_time(policy_bundle: PolicyBundle) -> None:
    found = {
        name.split("policies/")[-1]: rules
        for name, text in policy_bundle.modules
        if not name.endswith("_test.rego") and (rules := _rules_reading_time(text))
    }
    assert found == TIME_READERS
