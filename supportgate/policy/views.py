"""GET /v1/policy and `supportgate policy rules`: the policies in force and their rules."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from .bundle import PolicyBundle
from .catalog import RuleInfo

if TYPE_CHECKING:  # events bring the logging stack, which `check` does without
    from supportgate.events import PolicyReloadFailed


class BundleView(msgspec.Struct, frozen=True, kw_only=True):
    name: str  # its directory's, or its file's without `.tar.gz`
    revision: str


class RuleView(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    severity: str
    title: str
    description: str
    source: str  # `builtin`, or the organisation bundle's name


class PolicyError(msgspec.Struct, frozen=True, kw_only=True):
    at: datetime
    revision: str | None  # the refused one (None: the policy files could not be read)
    kept: str  # the one still in force
    problems: list[str]  # each `file:line: message`


class PolicyView(msgspec.Struct, frozen=True, kw_only=True):
    revision: str  # decisions record it: it covers the built-in and organisation modules
    bundles: list[BundleView]
    rules: list[RuleView]
    last_error: PolicyError | None = None  # until new policy files come into force


def policy_view(
    bundle: PolicyBundle,
    catalog: Mapping[str, RuleInfo],
    last_error: PolicyReloadFailed | None = None,
) -> PolicyView:
    return PolicyView(
        revision=bundle.revision,
        last_error=None
        if last_error is None
        else PolicyError(
            at=last_error.at,
            revision=last_error.revision,
            kept=last_error.kept,
            problems=last_error.problems,
        ),
        bundles=[BundleView(name=org.name, revision=org.revision) for org in bundle.bundles],
        rules=[
            RuleView(
                id=rule.id,
                severity=rule.severity,
                title=rule.title,
                description=rule.description,
                source=rule.source,
            )
            for rule in (catalog[rule_id] for rule_id in sorted(catalog))
        ],
    )
