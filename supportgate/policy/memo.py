"""Decisions reused while the evaluation time cannot change them.

CI posts the same manifests again and again. A decision depends on the policies, the matrix,
the input without its time (`PolicyInput.timeless_key`) and, of the time, only on which side of
each of the input's time thresholds it falls (evidence coming due or turning stale, waivers
lapsing: supportgate.policy.time_thresholds). So the answer for one (policy revision, matrix,
timeless key, sides) is the answer for all of them: a repeated post of a deployment with fresh
evidence or a waiver reuses it, and a post after a threshold has passed has other sides, so
another key. Inputs whose decision may differ at every time (stale evidence, whose message
names the time, or a time Python cannot read as the policies do) are always evaluated, and so
is every input under policies with an organisation module that names `evaluated_at` or the
clock: an organisation's rules may compare the time in ways time_thresholds does not know. The
cache is bounded (least recently used out) and shared by threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from supportgate.manifests.decision import PolicyResult

from .bundle import PolicyBundle
from .engine import LoadedMatrix, PolicyEngine
from .inputs import PolicyInput
from .time_thresholds import sides

DEFAULT_CAPACITY = 4096

_Key = tuple[str, str, str, tuple[bool, ...]]


class MemoizedEngine:
    """A PolicyEngine that asks the engine it wraps only for answers it has not kept."""

    def __init__(
        self, engine: PolicyEngine, bundle: PolicyBundle, *, capacity: int = DEFAULT_CAPACITY
    ) -> None:
        """`bundle`: the policies `engine` evaluates."""
        self._engine = engine
        self.name = engine.name
        self._capacity = capacity
        self._reusable = {bundle.revision: _time_only_at_thresholds(bundle)}
        """Per policy revision: whether its decisions may be kept."""
        self._answers: OrderedDict[_Key, PolicyResult] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0  # these counts are for tests/integration/test_policy_memo.py (an oracle)
        self.misses = 0

    @property
    def policy_revision(self) -> str:
        return self._engine.policy_revision

    def evaluate(self, matrix: LoadedMatrix, policy_input: PolicyInput) -> PolicyResult:
        key = self._key(matrix, policy_input)
        kept = self._kept(key)
        if kept is not None:
            return kept
        result = self._engine.evaluate(matrix, policy_input)
        self._keep(key, result)
        return result

    def evaluate_batch(
        self, matrix: LoadedMatrix, inputs: Sequence[PolicyInput]
    ) -> list[PolicyResult]:
        keys = [self._key(matrix, item) for item in inputs]
        results = [self._kept(key) for key in keys]
        missing = [index for index, result in enumerate(results) if result is None]
        if missing:
            fresh = self._engine.evaluate_batch(matrix, [inputs[index] for index in missing])
            for index, result in zip(missing, fresh, strict=True):
                results[index] = result
                self._keep(keys[index], result)
        return [result for result in results if result is not None]

    def check_ready(self) -> None:
        self._engine.check_ready()

    def use(self, bundle: PolicyBundle, served_revision: str | None) -> None:
        """The answers are keyed by policy revision: the old ones age out."""
        self._reusable[bundle.revision] = _time_only_at_thresholds(bundle)
        self._engine.use(bundle, served_revision)

    def close(self) -> None:
        self._engine.close()

    def _key(self, matrix: LoadedMatrix, policy_input: PolicyInput) -> _Key | None:
        if not self._reusable.get(self._engine.policy_revision, False):
            return None
        passed = sides(policy_input.document, matrix.document.get("evidence_max_age_days"))
        if passed is None:
            return None
        return (self._engine.policy_revision, matrix.key, policy_input.timeless_key, passed)

    def _kept(self, key: _Key | None) -> PolicyResult | None:
        if key is None:
            return None
        with self._lock:
            result = self._answers.get(key)
            if result is None:
                self.misses += 1
            else:
                self.hits += 1
                self._answers.move_to_end(key)
            return result

    def _keep(self, key: _Key | None, result: PolicyResult) -> None:
        if key is None:
            return
        with self._lock:
            self._answers[key] = result
            while len(self._answers) > self._capacity:
                self._answers.popitem(last=False)


def _time_only_at_thresholds(bundle: PolicyBundle) -> bool:
    """Whether the bundle's decisions depend on the time only at time_thresholds' thresholds:
    the built-in policies do (tests/policies/test_time_thresholds.py); an organisation module
    that so much as names `evaluated_at` or `now_ns` is taken to compare it otherwise."""
    return not any(
        "evaluated_at" in text or "now_ns" in text
        for org in bundle.bundles
        for _, text in org.modules
    )
