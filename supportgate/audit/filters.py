"""What `GET /v1/audit` filters on, checked: a bad value is a UsageError naming the parameter."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from supportgate.errors import UsageError
from supportgate.manifests.decision import MANIFEST_KINDS as KINDS
from supportgate.manifests.decision import VERDICTS
from supportgate.pagination import check_choice, parse_time

FORMATS = ("json", "csv")


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """None matches anything; `rule`: a violation's rule id, any severity; `since` inclusive
    and `until` exclusive, both on `evaluated_at`."""

    kind: str | None = None
    name: str | None = None
    verdict: str | None = None
    rule: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    matrix_version: str | None = None

    @classmethod
    def parse(
        cls,
        *,
        kind: str | None = None,
        name: str | None = None,
        verdict: str | None = None,
        rule: str | None = None,
        since: str | None = None,
        until: str | None = None,
        matrix_version: str | None = None,
    ) -> AuditFilter:
        check_choice("kind", kind, KINDS)
        check_choice("verdict", verdict, VERDICTS)
        start = parse_time("since", since)
        end = parse_time("until", until)
        if start is not None and end is not None and end < start:
            raise UsageError(f"must not be before since ({since}), got {until!r}", field="until")
        return cls(
            kind=kind,
            name=name,
            verdict=verdict,
            rule=rule,
            since=start,
            until=end,
            matrix_version=matrix_version,
        )
