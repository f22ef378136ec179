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
        last_error=msgspec.convert(last_error, PolicyError | None, from_attributes=True),
        bundles=msgspec.convert(bundle.bundles, list[BundleView], from_attributes=True),
        rules=msgspec.convert(
            [catalog[rule_id] for rule_id in sorted(catalog)], list[RuleView], from_attributes=True
        ),
    )
