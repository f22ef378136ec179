"""When a sweep may know a decision unchanged without asking the engine.

A decision is a function of its policy input (the manifest, the hardware it runs on, the
waivers), the matrix and the policies, and of the evaluation time. Per
docs/policy-interface.md the time is only compared with evidence times (`evidence.stale`:
an `at` older than `evidence_max_age_days`) and with waiver expiry. So a sweep stores, per
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

from supportgate.policy.inputs import time_compared

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
    moments: list[datetime] = []
    try:
        _collect(content, max_age_days, waivers, moments)
    except _Unknown:
        return None  # a time Python does not read as the policies might: evaluate each time
    future = [moment - MARGIN for moment in moments if moment - MARGIN > evaluated_at]
    if len(future) < len([m for m in moments if m > evaluated_at]):
        return None  # a flip within the margin: evaluate again next time
    return min(future) if future else datetime.max.replace(tzinfo=UTC)


class _Unknown(Exception):
    pass


def _collect(
    content: Mapping[str, Any],
    max_age_days: Any,
    waivers: Sequence[Mapping[str, Any]],
    moments: list[datetime],
) -> None:
    """The moments the policies' time comparisons (policy.inputs.time_compared) can flip:
    an evidence time plus `evidence_max_age_days`, a waiver's expiry."""
    ages = isinstance(max_age_days, int | float) and not isinstance(max_age_days, bool)
    for where, value in time_compared(content, waivers):
        if where == "evidence" and not ages:
            continue  # no maximum age: an evidence time is never compared
        moment = _time(value)
        if moment is None:
            continue
        if where == "waiver":
            moments.append(moment)
            continue
        try:
            moments.append(moment + timedelta(days=float(max_age_days)))
        except (OverflowError, ValueError) as exc:
            raise _Unknown from exc


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None  # the policies never compare such a value with the time
    try:
        moment = datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError as exc:
        raise _Unknown from exc
    if moment.tzinfo is None:
        raise _Unknown
    return moment.astimezone(UTC)
