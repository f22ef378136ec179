"""GET /v1/alerts bodies: one alert as the API (and each webhook event's `data`) shows it."""

from __future__ import annotations

from datetime import datetime

import msgspec

from supportgate.manifests.decision import Cause, ManifestRef, Verdict, Violation


class AlertView(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    manifest: ManifestRef
    from_: Verdict = msgspec.field(name="from")
    to: Verdict
    cause: Cause
    matrix_version: str
    at: datetime
    decision_id: str
    gained: list[Violation] = []
    """Why: the violations of the alert's decision whose (rule, severity) the manifest's
    decision before it did not have, with their messages (supportgate/manifests/reasons.py)."""
    lost: list[Violation] = []
    """The violations of the decision before whose (rule, severity) this one no longer has."""


class AlertPage(msgspec.Struct, frozen=True, kw_only=True):
    items: list[AlertView]
    next_cursor: str | None
