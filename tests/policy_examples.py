"""The examples beside each policy concern (policies/supportgate/<concern>/examples/).

Gatekeeper-library style: each concern keeps allowed and denied inputs beside its policy,
and a `suite.yaml.example` naming, for each example file, the concern's rule ids it fires at the
suite's `evaluated_at` (none for an `allowed-` file). An example file is a YAML stream: the
manifest under test first, then any HardwareManifest its `hardware.ref` names (tracked
before it is evaluated). The suites are read into Structs that forbid unknown fields, so a
misspelt key fails loudly instead of checking nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Final

import msgspec
import yaml

from supportgate.config import DEFAULT_POLICY_DIR
from supportgate.evaluations.evaluator import Evaluator, Subject
from supportgate.manifests import HardwareManifest, Manifest, decode_manifests
from supportgate.manifests.decision import Decision

CONCERNS: Final = (
    "manifest",
    "claims",
    "evidence",
    "port",
    "topology",
    "service",
    "support",
    "host",
    "hardware",
)
SUITE_FILE: Final = "suite.yaml.example"
SUFFIX: Final = ".yaml.example"
"""Every file of an examples/ directory ends so: OPA reads .json, .yaml and .yml files under
the policy directory as data, and these must stay out of `data`."""


class Suite(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A concern's suite.yaml.example: when its examples are evaluated, and what each one fires."""

    evaluated_at: datetime
    examples: dict[str, frozenset[str]]


@dataclass(frozen=True)
class Example:
    concern: str
    path: Path
    expected: frozenset[str]
    """The concern's rule ids that fire (empty: the example is allowed by the concern)."""
    evaluated_at: datetime
    manifest: Manifest
    pools: tuple[HardwareManifest, ...]

    @property
    def name(self) -> str:
        return f"{self.concern}/{self.path.name}"

    def evaluate(self, evaluator: Evaluator) -> Decision:
        pools = {pool.metadata.name: pool for pool in self.pools}
        return evaluator.evaluate(
            Subject(self.manifest), evaluated_at=self.evaluated_at, hardware=pools.get
        ).decision


def examples_dir(concern: str) -> Path:
    return DEFAULT_POLICY_DIR / "supportgate" / concern / "examples"


@cache
def suite(concern: str) -> Suite:
    document = yaml.safe_load((examples_dir(concern) / SUITE_FILE).read_text("utf-8"))
    return msgspec.convert(document, Suite)


@cache
def examples() -> tuple[Example, ...]:
    """Every concern's examples, in suite order."""
    found = []
    for concern in CONCERNS:
        wanted = suite(concern)
        for file, rules in wanted.examples.items():
            path = examples_dir(concern) / file
            manifest, *pools = decode_manifests(path.read_bytes(), fmt="yaml", source=str(path))
            assert all(isinstance(pool, HardwareManifest) for pool in pools), path
            found.append(
                Example(
                    concern=concern,
                    path=path,
                    expected=rules,
                    evaluated_at=wanted.evaluated_at,
                    manifest=manifest,
                    pools=tuple(pool for pool in pools if isinstance(pool, HardwareManifest)),
                )
            )
    return tuple(found)
