"""When a sweep may know a decision unchanged without asking the engine: the same `key` (the
digest of everything but the time) before `stable_until` (docs/reevaluation.md, The memo).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from supportgate.policy.time_thresholds import UnknownTime, thresholds

MARGIN = timedelta(hours=1)
_encoder = msgspec.json.Encoder(order="sorted")


def memo_key(
    *,
    content_digest: str,
    pool_digest: str | None,
    matrix_key: str,
    policy_revision: str,
    waivers: Sequence[Mapping[str, Any]],
    latest_decision_id: str | None,
) -> str:
    parts = [
        content_digest,
        pool_digest or "-",
        matrix_key,
        policy_revision,
        hashlib.sha256(_encoder.encode(list(waivers))).hexdigest(),
        latest_decision_id or "-",
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def stable_until(
    content: Mapping[str, Any],
    *,
    evaluated_at: datetime,
    max_age_days: Any,
    waivers: Sequence[Mapping[str, Any]],
) -> datetime | None:
    """Less MARGIN; None when that is already now."""
    try:
        found = thresholds(content, waivers, max_age_days)
    except UnknownTime:
        return None  # a time Python does not read as the policies might: evaluate each time
    moments = [threshold.flips_at for threshold in found]
    future = [moment - MARGIN for moment in moments if moment - MARGIN > evaluated_at]
    if len(future) < len([m for m in moments if m > evaluated_at]):
        return None  # a flip within the margin: evaluate again next time
    return min(future) if future else datetime.max.replace(tzinfo=UTC)
