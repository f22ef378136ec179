"""When a sweep may know a decision unchanged without asking the engine.

A decision is a function of its policy input (the manifest, the hardware it runs on, the
waivers), the matrix and the policies, and of the evaluation time. Per
docs/policy-interface.md the time is only compared with evidence times (`evidence.future`,
`evidence.stale`: an `at` ahead of the time or older than `evidence_max_age_days`) and with
waiver expiry (the thresholds of
supportgate.policy.time_thresholds). So a sweep stores, per
manifest, `key` = the digest of everything but the time (content, referenced pool,
matrix, policy revision, waivers, and the latest decision id: a submission in between
invalidates it), and `stable_until` = the first moment one of those comparisons can flip,
less a margin. A later sweep with the same key before `stable_until` writes nothing for
that manifest, exactly as if it had evaluated it (the verdict and violations cannot have
moved); anything else is evaluated. A scheduled sweep over an unchanged fleet therefore
costs a read and one UPDATE per batch.
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
    """The first moment after `evaluated_at` when time could change this decision (less
    MARGIN); None when that is already now (so the next sweep evaluates it again)."""
    try:
        found = thresholds(content, waivers, max_age_days)
    except UnknownTime:
        return None  # a time Python does not read as the policies might: evaluate each time
    moments = [threshold.flips_at for threshold in found]
    future = [moment - MARGIN for moment in moments if moment - MARGIN > evaluated_at]
    if len(future) < len([m for m in moments if m > evaluated_at]):
        return None  # a flip within the margin: evaluate again next time
    return min(future) if future else datetime.max.replace(tzinfo=UTC)
