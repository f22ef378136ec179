"""The example manifests (examples/manifests/) and their expected decisions
(examples/expected.yaml).

expected.yaml is read into Structs that forbid unknown fields, so a misspelt key (`absnet:`)
fails loudly instead of quietly checking nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any, Final, Literal

import msgspec
import yaml

EXAMPLES: Final = Path(__file__).resolve().parents[1] / "examples" / "manifests"
EXPECTED_FILE: Final = EXAMPLES.parent / "expected.yaml"
ACME: Final = EXAMPLES.parent / "policies" / "acme"
"""The example organisation policy bundle (docs/organisation-policies.md)."""
ACME_FILE: Final = "supportgate/org/acme/acme.rego"  # in the directory its package names

Verdict = Literal["supported", "experimental", "rejected"]


class Expectation(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """One example's expected decision: its verdict, the rules it gets, rules it must not."""

    verdict: Verdict
    rules: frozenset[str]
    absent: frozenset[str] = frozenset()

    def problems(self, verdict: str, rules: Iterable[str], *, exact: bool = False) -> list[str]:
        """What a decision with this verdict and these rule ids gets wrong (nothing: `[]`).
        `exact`: the rules must be exactly `rules` (only true at the expected time)."""
        got = set(rules)
        found = []
        if verdict != self.verdict:
            found.append(f"verdict {verdict}, expected {self.verdict}")
        if missing := sorted(self.rules - got):
            found.append(f"missing rules {missing}")
        if exact and (extra := sorted(got - self.rules)):
            found.append(f"unexpected rules {extra}")
        if forbidden := sorted(self.absent & got):
            found.append(f"rules that must be absent {forbidden}")
        return found


class Expected(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """expected.yaml: the evaluation time and each example's decision, in tracking order."""

    evaluated_at: datetime
    decisions: dict[str, Expectation]

    @property
    def files(self) -> list[Path]:
        """The example files in tracking order (hardware first)."""
        return [EXAMPLES / name for name in self.decisions]

    def showing(self, rule: str) -> list[tuple[str, str]]:
        """(kind, name) of the examples expected to get `rule`, sorted."""
        found = []
        for file, want in self.decisions.items():
            if rule in want.rules:
                document = yaml.safe_load((EXAMPLES / file).read_text("utf-8"))
                found.append((document["kind"], document["metadata"]["name"]))
        return sorted(found)


def report_problems(results: list[dict[str, Any]], *, exact: bool = False) -> dict[str, list[str]]:
    """What the results of a `check --format json` report on the examples get wrong, by
    source file (nothing: `{}`); `exact` as in Expectation.problems."""
    decisions = expected().decisions
    problems = {}
    for result in results:
        decision = result["decision"]
        rules = {violation["rule"] for violation in decision["violations"]}
        want = decisions[Path(result["source"]).name]
        if found := want.problems(decision["verdict"], rules, exact=exact):
            problems[result["source"]] = found
    return problems


@cache
def expected() -> Expected:
    document = yaml.safe_load(EXPECTED_FILE.read_text("utf-8"))
    return msgspec.convert(document, Expected)
